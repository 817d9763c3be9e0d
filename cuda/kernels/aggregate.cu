// Neighbour aggregation of a sampled block (after the prelude): for each row r listed in
// `rows`, out[r] = row_scale[r] * sum over k in indptr[r]..indptr[r+1] of
// col_scale[cols[k]] * x[cols[k]] (a null scale is 1). Float32 features, read and written in
// words of V (float4 when the row is a multiple of 4 floats, else float).
//
// Two paths, for the two classes of rows (the partitioning seed's hybrid metric):
//   sparse: one warp per row, the edges summed in order (the same order as the CPU's);
//   dense:  one block of 8 warps per row, warp w summing edges w, w+8, ... in order, the
//           eight partial sums then added in warp order (the CPU's dense order).
// No atomics: each output row is written by one warp or one block, so results are
// deterministic and equal to the CPU's bit for bit (NVRTC runs with --fmad=false).

#define WF_A_DENSE_WARPS 8

__device__ __forceinline__ float wf_a_mul(float v, float s) { return v * s; }
__device__ __forceinline__ float4 wf_a_mul(float4 v, float s) { return make_float4(v.x * s, v.y * s, v.z * s, v.w * s); }
__device__ __forceinline__ float wf_a_add(float a, float b) { return a + b; }
__device__ __forceinline__ float4 wf_a_add(float4 a, float4 b) { return make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w); }
template <typename V> __device__ __forceinline__ V wf_a_zero();
template <> __device__ __forceinline__ float wf_a_zero<float>() { return 0.0f; }
template <> __device__ __forceinline__ float4 wf_a_zero<float4>() { return make_float4(0.0f, 0.0f, 0.0f, 0.0f); }

// Sums edges first, first + stride, ... < end of one row into acc[0..words/32], word lane +
// 32 j each: the columns are read 32 at a time, one per lane, and passed round by shuffles.
template <typename V, int J>
__device__ __forceinline__ void wf_a_sum(const i64* cols, i64 first, i64 end, i64 stride, const float* col_scale,
                                         const V* x, u64 words, u64 w0, V* acc, u32 lane) {
    for (i64 base = first; base < end; base += 32 * stride) {
        const i64 mine = base + (i64)lane * stride;
        const i64 c_mine = mine < end ? cols[mine] : 0;
        const float s_mine = (mine < end && col_scale) ? col_scale[c_mine] : 1.0f;
        const i64 left = (end - base + stride - 1) / stride;
        const int n = left < 32 ? (int)left : 32;
        for (int t = 0; t < n; t++) {
            const i64 c = __shfl_sync(0xffffffffu, c_mine, t);
            const float s = __shfl_sync(0xffffffffu, s_mine, t);
            const V* row = x + (u64)c * words;
#pragma unroll
            for (int j = 0; j < J; j++) {
                const u64 w = w0 + lane + 32 * j;
                if (w < words) acc[j] = wf_a_add(acc[j], col_scale ? wf_a_mul(__ldg(row + w), s) : __ldg(row + w));
            }
        }
    }
}

// A warp per row of `rows[0..n]`.
template <typename V>
__device__ __forceinline__ void wf_a_sparse(const i64* indptr, const i64* cols, const i64* rows, u64 n,
                                            const float* row_scale, const float* col_scale, const V* x, u64 words, V* out) {
    const u32 lane = threadIdx.x & 31;
    const u64 warps = ((u64)gridDim.x * blockDim.x) >> 5;
    for (u64 i = ((u64)blockIdx.x * blockDim.x + threadIdx.x) >> 5; i < n; i += warps) {
        const i64 r = rows[i];
        const i64 first = indptr[r], end = indptr[r + 1];
        const float rs = row_scale ? row_scale[r] : 1.0f;
        for (u64 w0 = 0; w0 < words; w0 += 32 * 4) {
            V acc[4] = {wf_a_zero<V>(), wf_a_zero<V>(), wf_a_zero<V>(), wf_a_zero<V>()};
            wf_a_sum<V, 4>(cols, first, end, 1, col_scale, x, words, w0, acc, lane);
#pragma unroll
            for (int j = 0; j < 4; j++) {
                const u64 w = w0 + lane + 32 * j;
                if (w < words) out[(u64)r * words + w] = row_scale ? wf_a_mul(acc[j], rs) : acc[j];
            }
        }
    }
}

// A block of WF_A_DENSE_WARPS warps per row of `rows[0..n]`.
template <typename V>
__device__ __forceinline__ void wf_a_dense(const i64* indptr, const i64* cols, const i64* rows, u64 n,
                                           const float* row_scale, const float* col_scale, const V* x, u64 words, V* out) {
    __shared__ V part[WF_A_DENSE_WARPS][32 * 4];
    const u32 lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    for (u64 i = blockIdx.x; i < n; i += gridDim.x) {
        const i64 r = rows[i];
        const i64 first = indptr[r], end = indptr[r + 1];
        const float rs = row_scale ? row_scale[r] : 1.0f;
        for (u64 w0 = 0; w0 < words; w0 += 32 * 4) {
            V acc[4] = {wf_a_zero<V>(), wf_a_zero<V>(), wf_a_zero<V>(), wf_a_zero<V>()};
            wf_a_sum<V, 4>(cols, first + warp, end, WF_A_DENSE_WARPS, col_scale, x, words, w0, acc, lane);
#pragma unroll
            for (int j = 0; j < 4; j++) part[warp][lane + 32 * j] = acc[j];
            __syncthreads();
            for (u32 t = threadIdx.x; t < 32 * 4; t += blockDim.x) {
                const u64 w = w0 + t;
                if (w < words) {
                    V sum = part[0][t];
                    for (int p = 1; p < WF_A_DENSE_WARPS; p++) sum = wf_a_add(sum, part[p][t]);
                    out[(u64)r * words + w] = row_scale ? wf_a_mul(sum, rs) : sum;
                }
            }
            __syncthreads();
        }
    }
}

extern "C" __global__ void wf_a_sparse4(const i64* indptr, const i64* cols, const i64* rows, u64 n, const float* row_scale,
                                        const float* col_scale, const float4* x, u64 words, float4* out) {
    wf_a_sparse<float4>(indptr, cols, rows, n, row_scale, col_scale, x, words, out);
}

extern "C" __global__ void wf_a_sparse1(const i64* indptr, const i64* cols, const i64* rows, u64 n, const float* row_scale,
                                        const float* col_scale, const float* x, u64 words, float* out) {
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
