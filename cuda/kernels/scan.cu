// Exclusive prefix sums on the device, shared by the sampler and the triangle counter
// (cuda/src/scan.rs drives them): n inputs (u32 or u64) give n + 1 u64 outputs, the last the
// total. Three passes over 1024-element tiles: each tile's sum; the tile sums scanned by one
// block; each tile scanned from its offset. Compiled after the prelude.

#define WF_SCAN_TILE 1024ull

// Pass 1: each tile's sum.
template <typename T>
__device__ __forceinline__ void wf_scan_tiles(const T* in, u64 n, u64* tile_sums) {
    __shared__ u64 warp_sums[32];
    u64 tile = blockIdx.x;
    u64 s = 0;
    u64 end = min((tile + 1) * WF_SCAN_TILE, n);
    for (u64 i = tile * WF_SCAN_TILE + threadIdx.x; i < end; i += blockDim.x) s += (u64)in[i];
    for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
    if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = s;
    __syncthreads();
    if (threadIdx.x == 0) {
        u64 t = 0;
        for (u32 w = 0; w < blockDim.x / 32; ++w) t += warp_sums[w];
        tile_sums[tile] = t;
    }
}

// One block-wide step of an exclusive scan, called by every thread of the block: x's
// exclusive prefix within the block plus *carry; *carry then grows by the block's sum.
__device__ __forceinline__ u64 wf_block_scan_step(u64 x, u64* warp_sums, u64* carry) {
    u64 v = x;  // inclusive scan within the warp
    for (int o = 1; o < 32; o <<= 1) {
        u64 y = __shfl_up_sync(0xffffffffu, v, o);
        if ((threadIdx.x & 31) >= (u32)o) v += y;
    }
    if ((threadIdx.x & 31) == 31) warp_sums[threadIdx.x >> 5] = v;
    __syncthreads();
    u64 before = *carry;
    for (u32 w = 0; w < (threadIdx.x >> 5); ++w) before += warp_sums[w];
    __syncthreads();
    if (threadIdx.x == blockDim.x - 1) *carry = before + v;
    __syncthreads();
    return before + v - x;
}

// Pass 2 (one block): tile sums -> their exclusive sums, in place; the total into out[n].
extern "C" __global__ void wf_scan_sums(u64* tile_sums, u64 tiles, u64* out, u64 n) {
    __shared__ u64 carry_s;
    __shared__ u64 warp_sums[32];
    if (threadIdx.x == 0) carry_s = 0;
    __syncthreads();
    for (u64 base = 0; base < tiles; base += blockDim.x) {
        u64 i = base + threadIdx.x;
        u64 x = i < tiles ? tile_sums[i] : 0;
        u64 excl = wf_block_scan_step(x, warp_sums, &carry_s);
        if (i < tiles) tile_sums[i] = excl;
    }
    if (threadIdx.x == 0) out[n] = carry_s;
}

// Pass 3: each tile scanned, offset by its tile's exclusive sum.
template <typename T>
__device__ __forceinline__ void wf_scan_apply(const T* in, u64 n, const u64* tile_sums, u64* out) {
    __shared__ u64 warp_sums[32];
    __shared__ u64 carry_s;
    u64 tile = blockIdx.x;
    if (threadIdx.x == 0) carry_s = tile_sums[tile];
    __syncthreads();
    u64 end = min((tile + 1) * WF_SCAN_TILE, n);
    for (u64 base = tile * WF_SCAN_TILE; base < end; base += blockDim.x) {
        u64 i = base + threadIdx.x;
        u64 x = i < n ? (u64)in[i] : 0;
        u64 excl = wf_block_scan_step(x, warp_sums, &carry_s);
        if (i < n) out[i] = excl;
    }
}

extern "C" __global__ void wf_scan_tiles_u32(const u32* in, u64 n, u64* tile_sums) { wf_scan_tiles(in, n, tile_sums); }
extern "C" __global__ void wf_scan_tiles_u64(const u64* in, u64 n, u64* tile_sums) { wf_scan_tiles(in, n, tile_sums); }
extern "C" __global__ void wf_scan_apply_u32(const u32* in, u64 n, const u64* tile_sums, u64* out) { wf_scan_apply(in, n, tile_sums, out); }
extern "C" __global__ void wf_scan_apply_u64(const u64* in, u64 n, const u64* tile_sums, u64* out) { wf_scan_apply(in, n, tile_sums, out); }
