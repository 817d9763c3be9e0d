// A sampled block's aggregation plan, built on the device (after the prelude and the scan
// kernels; cuda/src/aggregate_plan.rs drives them): the block's edges as CSR rows keyed by
// destination (the forward pass) and by source (the backward pass), each row keeping its edges
// in edge order, and each direction's rows split into dense and sparse ones by the
// partitioning seed's hybrid metric (wayfarer::partition::dense_rows), dense rows first.
//
// Everything is deterministic: the counts use atomics, but an entry's final place is its rank
// by edge index within its row, and the floating sums of the classification are one block's
// fixed-order reductions. With --fmad=false the hybrid metric is the CPU's arithmetic.

#define WF_AP_I64_MAX 0x7fffffffffffffffll
#define WF_AP_I64_MIN (-0x7fffffffffffffffll - 1ll)

// The smallest and largest of lo/hi over the block, into range[0] / range[1] (atomically).
__device__ __forceinline__ void wf_ap_range(i64 lo, i64 hi, i64* range) {
    for (int o = 16; o > 0; o >>= 1) {
        lo = min(lo, (i64)__shfl_down_sync(0xffffffffu, (long long)lo, o));
        hi = max(hi, (i64)__shfl_down_sync(0xffffffffu, (long long)hi, o));
    }
    if ((threadIdx.x & 31) == 0) {
        atomicMin((long long*)&range[0], (long long)lo);
        atomicMax((long long*)&range[1], (long long)hi);
    }
}

// counts[k] = entries of key equal to k, for the keys in 0..rows; range = the keys' min and
// max (the host refuses a key outside 0..rows after the plan, naming it).
extern "C" __global__ void wf_ap_count(const i64* key, u64 m, u64 rows, u32* counts, i64* range) {
    i64 lo = WF_AP_I64_MAX, hi = WF_AP_I64_MIN;
    for (u64 e = blockIdx.x * (u64)blockDim.x + threadIdx.x; e < m; e += (u64)gridDim.x * blockDim.x) {
        i64 k = key[e];
        lo = min(lo, k);
        hi = max(hi, k);
        if (k >= 0 && (u64)k < rows) atomicAdd(&counts[k], 1u);
    }
    wf_ap_range(lo, hi, range);
}

// Each edge into a free slot of its row (start = the exclusive sums of the counts): the order
// within a row is the atomics', fixed by wf_ap_settle. Keys outside 0..rows were not counted
// and are skipped (the host refuses them).
extern "C" __global__ void wf_ap_place(const i64* key, u64 m, u64 rows, const u64* start, u32* fill, u32* perm) {
    for (u64 e = blockIdx.x * (u64)blockDim.x + threadIdx.x; e < m; e += (u64)gridDim.x * blockDim.x) {
        i64 k = key[e];
        if (k < 0 || (u64)k >= rows) continue;
        perm[start[k] + atomicAdd(&fill[k], 1u)] = (u32)e;
    }
}

// Each placed edge's column written at its rank by edge index within its row: the row's edges
// in edge order (a stable sort by key). A row's entries are read by every thread of the row,
// mostly the same address across a warp.
extern "C" __global__ void wf_ap_settle(const i64* key, const u32* perm, u64 rows, const u64* start, const i64* other, i64* cols) {
    u64 placed = start[rows];
    for (u64 p = blockIdx.x * (u64)blockDim.x + threadIdx.x; p < placed; p += (u64)gridDim.x * blockDim.x) {
        u32 e = perm[p];
        i64 k = key[e];
        u64 lo = start[k], hi = start[k + 1];
        u64 rank = 0;
        for (u64 q = lo; q < hi; ++q) rank += perm[q] < e;
        cols[lo + rank] = other[e];
    }
}

// out[i] = in[i] as int64 (the exclusive sums as indptr, the counts as degrees).
extern "C" __global__ void wf_ap_widen_u64(const u64* in, u64 n, i64* out) {
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n; i += (u64)gridDim.x * blockDim.x) out[i] = (i64)in[i];
}
extern "C" __global__ void wf_ap_widen_u32(const u32* in, u64 n, i64* out) {
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n; i += (u64)gridDim.x * blockDim.x) out[i] = (i64)in[i];
}

// out[r] = 1 / max(1, counts[r]) in float32 (a mean's scale; torch's `1.0 / d.clamp(min=1)`
// rounds the same: both are IEEE divisions).
extern "C" __global__ void wf_ap_inv_degree(const u32* counts, u64 n, float* out) {
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n; i += (u64)gridDim.x * blockDim.x) {
        out[i] = 1.0f / (float)max(counts[i], 1u);
    }
}

// h[r] = the density of row r's node, nodes[r] (an index into density's len values), or 0
// without densities; range = the nodes' min and max (checked by the host, as above).
extern "C" __global__ void wf_ap_density(const i64* nodes, const double* density, u64 len, u64 n, double* h, i64* range) {
    i64 lo = WF_AP_I64_MAX, hi = WF_AP_I64_MIN;
    for (u64 r = blockIdx.x * (u64)blockDim.x + threadIdx.x; r < n; r += (u64)gridDim.x * blockDim.x) {
        double d = 0.0;
        if (density != 0) {
            i64 v = nodes[r];
            lo = min(lo, v);
            hi = max(hi, v);
            if (v >= 0 && (u64)v < len) d = density[v];
        }
        h[r] = d;
    }
    if (density != 0) wf_ap_range(lo, hi, range);
}

// One block of 1024 threads: sums[slot] = the sum of h over n rows, or (squares) of
// (h[r] - sums[slot - 1] / n)^2; each thread adds its strided share in order, then a fixed tree.
extern "C" __global__ void wf_ap_sum(const double* h, u64 n, double* sums, u32 slot, int squares) {
    __shared__ double part[1024];
    double nf = (double)(n > 0 ? n : 1);
    double mean = squares ? sums[slot - 1] / nf : 0.0;
    double s = 0.0;
    for (u64 r = threadIdx.x; r < n; r += blockDim.x) {
        double x = h[r];
        s += squares ? (x - mean) * (x - mean) : x;
    }
    part[threadIdx.x] = s;
    __syncthreads();
    for (u32 w = blockDim.x / 2; w > 0; w >>= 1) {
        if (threadIdx.x < w) part[threadIdx.x] += part[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0) sums[slot] = part[0];
}

// h[r] = alpha * N_r / mean(N) + (1 - alpha) * D_r / mean(D) (each term 0 where its mean is
// 0), from the densities in h, their sum in sums[0], the degrees and their total m.
extern "C" __global__ void wf_ap_hybrid(const u32* counts, u64 n, u64 m, u64 alpha_bits, const double* sums, double* h) {
    double alpha = __longlong_as_double((long long)alpha_bits);
    double nf = (double)(n > 0 ? n : 1);
    double mean_d = (double)m / nf, mean_n = sums[0] / nf;
    for (u64 r = blockIdx.x * (u64)blockDim.x + threadIdx.x; r < n; r += (u64)gridDim.x * blockDim.x) {
        double sn = mean_n > 0.0 ? h[r] / mean_n : 0.0;
        double sd = mean_d > 0.0 ? (double)counts[r] / mean_d : 0.0;
        h[r] = alpha * sn + (1.0 - alpha) * sd;
    }
}

// flags[r] = 1 where h[r] exceeds tau = mean(h) + 0.5 * std(h) (sums[1], sums[2]).
extern "C" __global__ void wf_ap_flags(const double* h, u64 n, const double* sums, u32* flags) {
    double nf = (double)(n > 0 ? n : 1);
    double tau = sums[1] / nf + 0.5 * sqrt(sums[2] / nf);
    for (u64 r = blockIdx.x * (u64)blockDim.x + threadIdx.x; r < n; r += (u64)gridDim.x * blockDim.x) flags[r] = h[r] > tau;
}

// order = the dense rows, then the sparse ones, each in row order (pos = the flags' exclusive
// sums; pos[n] dense rows).
extern "C" __global__ void wf_ap_order(const u32* flags, const u64* pos, u64 n, i64* order) {
    u64 dense = pos[n];
    for (u64 r = blockIdx.x * (u64)blockDim.x + threadIdx.x; r < n; r += (u64)gridDim.x * blockDim.x) {
        order[flags[r] ? pos[r] : dense + r - pos[r]] = (i64)r;
    }
}
