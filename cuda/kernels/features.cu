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
