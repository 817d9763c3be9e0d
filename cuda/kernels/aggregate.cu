// Neighbour aggregation of a sampled block (after the prelude): for each row r listed in
// `rows`, out[r] = row_scale[r] * sum over k in indptr[r]..indptr[r+1] of
// col_scale[cols[k]] * x[cols[k]] (a null scale is 1). Float32 features, read and written in
// words of V (float4 when the row is a multiple of 4 floats, else float).
//
// Two kernels, for the two classes of rows (the partitioning seed's hybrid metric); `rows`
// lists the rows of one class, and a block takes eight consecutive entries, a warp each.
//   sparse: the warp sums the row's edges in order (the CPU's order); few registers, so
//           many warps per SM hide the latency of the many short rows;
//   dense:  eight partial sums, edge k into sum k mod 8, added in order at the end (the CPU's
//           dense order): a warp keeps the eight in registers (eight independent chains of
//           loads), or, for a row of WF_A_LONG edges or more, the block's eight warps take
//           one partial each and add them through shared memory.
// No atomics: each output row is written by one warp or one block, so results are
// deterministic and equal to the CPU's bit for bit (NVRTC runs with --fmad=false).

#define WF_A_WARPS 8
#define WF_A_LONG 64

__device__ __forceinline__ float wf_a_mul(float v, float s) { return v * s; }
__device__ __forceinline__ float4 wf_a_mul(float4 v, float s) { return make_float4(v.x * s, v.y * s, v.z * s, v.w * s); }
__device__ __forceinline__ float wf_a_add(float a, float b) { return a + b; }
__device__ __forceinline__ float4 wf_a_add(float4 a, float4 b) { return make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w); }
template <typename V> __device__ __forceinline__ V wf_a_zero();
template <> __device__ __forceinline__ float wf_a_zero<float>() { return 0.0f; }
template <> __device__ __forceinline__ float4 wf_a_zero<float4>() { return make_float4(0.0f, 0.0f, 0.0f, 0.0f); }

// Edges first, first + stride, ... < end of one row, their word w (this lane's) scaled and
// added to acc[t % P] for the t-th edge: P = 1 sums them in order, P = 8 keeps the dense
// order's eight partial sums. The columns are read 32 at a time, one per lane, and passed
// round by shuffles; the 32 steps are unrolled, so the loads of several edges are in flight.
template <typename V, int P>
__device__ __forceinline__ void wf_a_sum(const i64* cols, i64 first, i64 end, i64 stride, const float* col_scale,
                                         const V* x, u64 words, u64 w, V* acc, u32 lane) {
    for (i64 base = first; base < end; base += 32 * stride) {
        const i64 mine = base + (i64)lane * stride;
        const i64 c_mine = mine < end ? cols[mine] : 0;
        const float s_mine = (mine < end && col_scale) ? col_scale[c_mine] : 1.0f;
        const i64 left = (end - base + stride - 1) / stride;
        const int n = left < 32 ? (int)left : 32;
#pragma unroll
        for (int t = 0; t < 32; t++) {
            if (t < n) {
                const i64 c = __shfl_sync(0xffffffffu, c_mine, t);
                const float s = __shfl_sync(0xffffffffu, s_mine, t);
                if (w < words) {
                    const V v = __ldg(x + (u64)c * words + w);
                    acc[t % P] = wf_a_add(acc[t % P], col_scale ? wf_a_mul(v, s) : v);
                }
            }
        }
    }
}

template <typename V>
__device__ __forceinline__ void wf_a_dense(const i64* indptr, const i64* cols, const i64* rows, u64 n,
                                           const float* row_scale, const float* col_scale, const V* x, u64 words, V* out) {
    __shared__ V part[WF_A_WARPS][32];
    const u32 lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    for (u64 base = (u64)blockIdx.x * WF_A_WARPS; base < n; base += (u64)gridDim.x * WF_A_WARPS) {
        // The long rows of the block's eight, one after another, by all its warps (every
        // test here is the same for the whole block).
        for (u32 k = 0; k < WF_A_WARPS && base + k < n; k++) {
            const i64 r = rows[base + k];
            const i64 first = indptr[r], end = indptr[r + 1];
            if (end - first < WF_A_LONG) continue;
            const float rs = row_scale ? row_scale[r] : 1.0f;
            for (u64 w0 = 0; w0 < words; w0 += 32) {
                V acc = wf_a_zero<V>();
                wf_a_sum<V, 1>(cols, first + warp, end, WF_A_WARPS, col_scale, x, words, w0 + lane, &acc, lane);
                part[warp][lane] = acc;
                __syncthreads();
                if (warp == 0 && w0 + lane < words) {
                    V sum = part[0][lane];
                    for (int p = 1; p < WF_A_WARPS; p++) sum = wf_a_add(sum, part[p][lane]);
                    out[(u64)r * words + w0 + lane] = row_scale ? wf_a_mul(sum, rs) : sum;
                }
                __syncthreads();
            }
        }
        const u64 i = base + warp;
        if (i >= n) continue;
        const i64 r = rows[i];
        const i64 first = indptr[r], end = indptr[r + 1];
        if (end - first >= WF_A_LONG) continue;
        const float rs = row_scale ? row_scale[r] : 1.0f;
        for (u64 w0 = 0; w0 < words; w0 += 32) {
            V acc[WF_A_WARPS];
#pragma unroll
            for (int p = 0; p < WF_A_WARPS; p++) acc[p] = wf_a_zero<V>();
            wf_a_sum<V, WF_A_WARPS>(cols, first, end, 1, col_scale, x, words, w0 + lane, acc, lane);
            V sum = acc[0];
#pragma unroll
            for (int p = 1; p < WF_A_WARPS; p++) sum = wf_a_add(sum, acc[p]);
            if (w0 + lane < words) out[(u64)r * words + w0 + lane] = row_scale ? wf_a_mul(sum, rs) : sum;
        }
    }
}

template <typename V>
__device__ __forceinline__ void wf_a_sparse(const i64* indptr, const i64* cols, const i64* rows, u64 n,
                                            const float* row_scale, const float* col_scale, const V* x, u64 words, V* out) {
    const u32 lane = threadIdx.x & 31;
    const u64 warps = ((u64)gridDim.x * blockDim.x) >> 5;
    for (u64 i = ((u64)blockIdx.x * blockDim.x + threadIdx.x) >> 5; i < n; i += warps) {
        const i64 r = rows[i];
        const i64 first = indptr[r], end = indptr[r + 1];
        const float rs = row_scale ? row_scale[r] : 1.0f;
        for (u64 w0 = 0; w0 < words; w0 += 32) {
            V acc = wf_a_zero<V>();
            wf_a_sum<V, 1>(cols, first, end, 1, col_scale, x, words, w0 + lane, &acc, lane);
            if (w0 + lane < words) out[(u64)r * words + w0 + lane] = row_scale ? wf_a_mul(acc, rs) : acc;
        }
    }
}

extern "C" __global__ void __launch_bounds__(256, 6) wf_a_sparse4(const i64* indptr, const i64* cols, const i64* rows, u64 n,
                                                               const float* row_scale, const float* col_scale,
                                                               const float4* x, u64 words, float4* out) {
    wf_a_sparse<float4>(indptr, cols, rows, n, row_scale, col_scale, x, words, out);
}

extern "C" __global__ void __launch_bounds__(256, 6) wf_a_sparse1(const i64* indptr, const i64* cols, const i64* rows, u64 n,
                                                               const float* row_scale, const float* col_scale,
                                                               const float* x, u64 words, float* out) {
    wf_a_sparse<float>(indptr, cols, rows, n, row_scale, col_scale, x, words, out);
}

extern "C" __global__ void __launch_bounds__(256) wf_a_dense4(const i64* indptr, const i64* cols, const i64* rows, u64 n,
                                                              const float* row_scale, const float* col_scale,
                                                              const float4* x, u64 words, float4* out) {
    wf_a_dense<float4>(indptr, cols, rows, n, row_scale, col_scale, x, words, out);
}

extern "C" __global__ void __launch_bounds__(256) wf_a_dense1(const i64* indptr, const i64* cols, const i64* rows, u64 n,
                                                              const float* row_scale, const float* col_scale,
                                                              const float* x, u64 words, float* out) {
    wf_a_dense<float>(indptr, cols, rows, n, row_scale, col_scale, x, words, out);
}
