// Feature gathering (after the prelude): row i of `out` is the feature row of node ids[i],
// read from the device cache where slot_of[id] >= 0 and otherwise from page-locked host
// memory through its mapped address (UVA zero-copy: the GPU reads host memory over the bus,
// no staging copy). One warp per row, in words of W bytes (the largest of 16, 4, 2 dividing
// the row). An id outside 0..rows sets *bad to its position + 1 and gives a row of zeros.
template <typename W>
__device__ __forceinline__ void wf_f_gather(const i64* ids, u64 n, const int* slot_of, u64 rows, const W* cache,
                                            const W* host, u64 row_words, W* out, u64* hits, u64* bad) {
    const u32 lane = threadIdx.x & 31;
    const u64 warps = ((u64)gridDim.x * blockDim.x) >> 5;
    u64 hit = 0;
    for (u64 i = ((u64)blockIdx.x * blockDim.x + threadIdx.x) >> 5; i < n; i += warps) {
        const i64 id = ids[i];
        W* dst = out + i * row_words;
        if (id < 0 || (u64)id >= rows) {
            if (lane == 0) atomicCAS((unsigned long long*)bad, 0ull, (unsigned long long)(i + 1));
            for (u64 w = lane; w < row_words; w += 32) dst[w] = W();
            continue;
        }
        const int slot = slot_of[id];
        const W* src = slot >= 0 ? cache + (u64)slot * row_words : host + (u64)id * row_words;
        hit += slot >= 0;
        for (u64 w = lane; w < row_words; w += 32) dst[w] = src[w];
    }
    if (lane == 0 && hit) atomicAdd((unsigned long long*)hits, (unsigned long long)hit);
}

extern "C" __global__ void wf_f_gather16(const i64* ids, u64 n, const int* slot_of, u64 rows, const uint4* cache,
                                         const uint4* host, u64 row_words, uint4* out, u64* hits, u64* bad) {
    wf_f_gather<uint4>(ids, n, slot_of, rows, cache, host, row_words, out, hits, bad);
}

extern "C" __global__ void wf_f_gather4(const i64* ids, u64 n, const int* slot_of, u64 rows, const u32* cache,
                                        const u32* host, u64 row_words, u32* out, u64* hits, u64* bad) {
    wf_f_gather<u32>(ids, n, slot_of, rows, cache, host, row_words, out, hits, bad);
}

extern "C" __global__ void wf_f_gather2(const i64* ids, u64 n, const int* slot_of, u64 rows,
                                        const unsigned short* cache, const unsigned short* host, u64 row_words,
                                        unsigned short* out, u64* hits, u64* bad) {
    wf_f_gather<unsigned short>(ids, n, slot_of, rows, cache, host, row_words, out, hits, bad);
}

// The dynamic cache (rows recently missed, in a ring of `slots` slots after the static ones):
// after a gather, its missed rows are admitted, up to `slots` of them, evicting the ring's
// oldest. Claim: each missed id not yet resident or claimed (slot_of -1 -> -2) takes a place
// in `list`; one past the ring's size is given back (slot_of -2 -> -1).
extern "C" __global__ void wf_f_claim(const i64* ids, u64 n, int* slot_of, u64 rows, u64 slots, u64* claimed, u32* list) {
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (u64)gridDim.x * blockDim.x) {
        const i64 id = ids[i];
        if (id < 0 || (u64)id >= rows) continue;
        if (atomicCAS(&slot_of[id], -1, -2) != -1) continue;
        const u64 k = atomicAdd((unsigned long long*)claimed, 1ull);
        if (k < slots) list[k] = (u32)id;
        else slot_of[id] = -1;
    }
}

// Admit: the k-th claimed row takes ring slot (head + k) mod slots (cache slot first_slot +
// that), its old owner evicted (slot_of back to -1), its row copied from host memory; one
// warp per admitted row, in 4-byte words (2-byte words for rows of 4k + 2 bytes).
extern "C" __global__ void wf_f_admit(const u64* claimed, const u32* list, int* slot_of, int* owner, u64 slots, u64 first_slot,
                                      const u64* head, unsigned char* cache, const unsigned char* host, u64 row_bytes) {
    const u64 count = min(*claimed, slots);
    const u32 lane = threadIdx.x & 31;
    const u64 warps = ((u64)gridDim.x * blockDim.x) >> 5;
    for (u64 k = ((u64)blockIdx.x * blockDim.x + threadIdx.x) >> 5; k < count; k += warps) {
        const u64 ring = (*head + k) % slots;
        const u32 row = list[k];
        if (lane == 0) {
            const int old = owner[ring];
            if (old >= 0) slot_of[old] = -1;
            owner[ring] = (int)row;
        }
        unsigned char* dst = cache + (first_slot + ring) * row_bytes;
        const unsigned char* src = host + (u64)row * row_bytes;
        if ((row_bytes & 3) == 0) {
            for (u64 w = lane; w < row_bytes / 4; w += 32) ((u32*)dst)[w] = ((const u32*)src)[w];
        } else {
            for (u64 w = lane; w < row_bytes / 2; w += 32) ((unsigned short*)dst)[w] = ((const unsigned short*)src)[w];
        }
        __syncwarp();
        if (lane == 0) {
            __threadfence();
            slot_of[row] = (int)(first_slot + ring);
        }
    }
}

// The ring's head moves past the rows admitted; the claim count is reset for the next gather.
extern "C" __global__ void wf_f_advance(u64* claimed, u64* head, u64 slots) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        *head = (*head + min(*claimed, slots)) % slots;
        *claimed = 0;
    }
}
