// Preprocessing kernels: the per-node arrays a walk's bound and estimate read, the packed
// (target, weight) edges and the hub bitmaps, built on the device from the uploaded CSR arrays
// (the host only uploads the graph). Spliced after walk.cu, in the same module.
//
// Each row is handled by one warp. Maxima, minima and counts do not depend on the order;
// sums do, so they follow the one order every backend uses (runtime's `row_sum`): lane L adds
// items L, L+32, ... of the row in f64 from +0, the warp combines the partials with a
// butterfly, and the result is rounded once to f32. The CPU's NodeStats gives the same bits.

__device__ __forceinline__ double wf_warp_sum(double v) {
    #pragma unroll
    for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(WF_FULL, v, off);
    return v;
}

__device__ __forceinline__ u64 wf_warp_id() { return ((u64)blockIdx.x * blockDim.x + threadIdx.x) >> 5; }
__device__ __forceinline__ u64 wf_num_warps() { return ((u64)gridDim.x * blockDim.x) >> 5; }

// edges[e] = (targets[e], bits of weights[e]): a sampled edge's destination and weight in one
// 8-byte load.
extern "C" __global__ void wf_prep_edges(const u32* targets, const float* weights, uint2* edges, u64 m) {
    for (u64 e = (u64)blockIdx.x * blockDim.x + threadIdx.x; e < m; e += (u64)gridDim.x * blockDim.x)
        edges[e] = make_uint2(targets[e], __float_as_uint(weights[e]));
}

// Per row: max (0 for an empty row), min (0 for an empty row), sum of the weights; every
// weight counts as 1 when `weights` is null. node_w packs (max, min, sum, 0).
extern "C" __global__ void wf_prep_weight_stats(const u64* offsets, const float* weights, u32 n, float4* node_w, float* wmax,
                                                float* wmin, float* wsum) {
    const u32 lane = threadIdx.x & 31;
    for (u64 v = wf_warp_id(); v < n; v += wf_num_warps()) {
        const u64 b = offsets[v], d = offsets[v + 1] - b;
        float hi, lo, sum;
        if (weights) {
            float h = 0.0f, l = __int_as_float(0x7f800000);
            double s = 0.0;
            for (u64 i = lane; i < d; i += 32) {
                const float x = weights[b + i];
                h = fmaxf(h, x); l = fminf(l, x); s += (double)x;
            }
            #pragma unroll
            for (int off = 16; off > 0; off >>= 1) {
                h = fmaxf(h, __shfl_xor_sync(WF_FULL, h, off));
                l = fminf(l, __shfl_xor_sync(WF_FULL, l, off));
            }
            hi = h; lo = d == 0 ? 0.0f : l; sum = (float)wf_warp_sum(s);
        } else {
            hi = lo = d > 0 ? 1.0f : 0.0f;
            sum = (float)d;
        }
        if (lane == 0) {
            node_w[v] = make_float4(hi, lo, sum, 0.0f);
            wmax[v] = hi; wmin[v] = lo; wsum[v] = sum;
        }
    }
}

// Per row and label l < k: the max weight (0 if none), the weight sum (the count when
// unweighted) and the count (its bits) of the row's edges labelled l, entry v * k + l.
extern "C" __global__ void wf_prep_label_stats(const u64* offsets, const float* weights, const u32* labels, u32 n, u32 k, float4* stats) {
    const u32 lane = threadIdx.x & 31;
    for (u64 v = wf_warp_id(); v < n; v += wf_num_warps()) {
        const u64 b = offsets[v], d = offsets[v + 1] - b;
        for (u32 l = 0; l < k; ++l) {
            float h = 0.0f;
            double s = 0.0;
            u32 c = 0;
            for (u64 i = lane; i < d; i += 32) {
                if (labels[b + i] == l) {
                    const float x = weights ? weights[b + i] : 1.0f;
                    h = fmaxf(h, x); s += (double)x; c += 1;
                }
            }
            #pragma unroll
            for (int off = 16; off > 0; off >>= 1) {
                h = fmaxf(h, __shfl_xor_sync(WF_FULL, h, off));
                c += __shfl_xor_sync(WF_FULL, c, off);
            }
            s = wf_warp_sum(s);
            if (lane == 0) stats[v * k + l] = make_float4(h, weights ? (float)s : (float)c, __uint_as_float(c), 0.0f);
        }
    }
}

// Per row: the largest and smallest out-degree among its destinations (0, 0 if empty).
extern "C" __global__ void wf_prep_neighbor_degree(const u64* offsets, const u32* targets, u32 n, u32* ndmax, u32* ndmin) {
    const u32 lane = threadIdx.x & 31;
    for (u64 v = wf_warp_id(); v < n; v += wf_num_warps()) {
        const u64 b = offsets[v], d = offsets[v + 1] - b;
        u32 hi = 0, lo = 0xFFFFFFFFu;
        for (u64 i = lane; i < d; i += 32) {
            const u32 t = targets[b + i];
            const u64 dt = offsets[t + 1] - offsets[t];
            const u32 dt32 = dt > 0xFFFFFFFFull ? 0xFFFFFFFFu : (u32)dt;
            hi = hi > dt32 ? hi : dt32; lo = lo < dt32 ? lo : dt32;
        }
        #pragma unroll
        for (int off = 16; off > 0; off >>= 1) {
            const u32 oh = __shfl_xor_sync(WF_FULL, hi, off), ol = __shfl_xor_sync(WF_FULL, lo, off);
            hi = hi > oh ? hi : oh; lo = lo < ol ? lo : ol;
        }
        if (lane == 0) { ndmax[v] = hi; ndmin[v] = d == 0 ? 0u : lo; }
    }
}

// Hub bitmaps: one block per hub; bits must start zeroed. hubs[k] is the node whose row
// becomes bitmap k (words 32-bit words each).
extern "C" __global__ void wf_prep_hub_bits(const u64* offsets, const u32* targets, const u32* hubs, u32 count, u32* bits, u64 words) {
    wf_fill_hub_bits(offsets, targets, hubs, count, bits, words);
}

// Row signatures (WfGraph::row_sig): a warp per row, each lane setting the bits of its share
// of the row, OR-combined across the warp; sig holds n * WF_SIG_WORDS zeroed words. A hub row
// (hub_slot[v] set) gets its flag and slot instead, and a mid-length row (wide_slot[v] set)
// its flags and slot, its bits going to wide (zeroed, WF_WIDE_WORDS words per slot). Either
// slot array may be null.
extern "C" __global__ void wf_prep_row_sigs(const u64* offsets, const u32* targets, u32 n, const u32* hub_slot, const u32* wide_slot,
                                            u32* sig, u32* wide) {
    const u32 lane = threadIdx.x & 31;
    for (u64 v = wf_warp_id(); v < n; v += wf_num_warps()) {
        const u32 slot = hub_slot ? hub_slot[v] : 0xFFFFFFFFu;
        if (slot != 0xFFFFFFFFu) {
            if (lane < 2) sig[v * WF_SIG_WORDS + lane] = lane == 0 ? WF_SIG_HUB : slot;
            continue;
        }
        const u64 b = offsets[v], d = offsets[v + 1] - b;
        const u32 ws = wide_slot ? wide_slot[v] : 0xFFFFFFFFu;
        if (ws != 0xFFFFFFFFu) {
            if (lane < 2) sig[v * WF_SIG_WORDS + lane] = lane == 0 ? (WF_SIG_HUB | WF_SIG_WIDE) : ws;
            for (u64 i = lane; i < d; i += 32) {
                const u32 h = wf_wide_hash(targets[b + i]);
                atomicOr(&wide[(u64)ws * WF_WIDE_WORDS + (h >> 5)], 1u << (h & 31));
            }
            continue;
        }
        u32 w[WF_SIG_WORDS] = {};
        for (u64 i = lane; i < d; i += 32) {
            const u32 h = wf_sig_hash(targets[b + i]);
            #pragma unroll
            for (int k = 0; k < WF_SIG_WORDS; ++k) w[k] |= (h >> 5) == (u32)k ? 1u << (h & 31) : 0u;
        }
        #pragma unroll
        for (int k = 0; k < WF_SIG_WORDS; ++k) {
            #pragma unroll
            for (int off = 16; off > 0; off >>= 1) w[k] |= __shfl_xor_sync(WF_FULL, w[k], off);
        }
        if (lane < WF_SIG_WORDS) {
            u32 mine = 0;
            #pragma unroll
            for (int k = 0; k < WF_SIG_WORDS; ++k) mine = lane == (u32)k ? w[k] : mine;
            sig[v * WF_SIG_WORDS + lane] = mine;
        }
    }
}

// Static factor f of every edge, for the structured proposals' tables (built on the host from
// these values, as the CPU builds them from its own).
extern "C" __global__ void wf_prep_term_factors(const WfGraph* gp, const WfParams* pp, u32 f, float* out, u64 m) {
    const WfGraph& g = *gp;
    const WfParams& p = *pp;
    for (u64 e = (u64)blockIdx.x * blockDim.x + threadIdx.x; e < m; e += (u64)gridDim.x * blockDim.x)
        out[e] = wf_term_static(g, p, (int)f, e);
}
