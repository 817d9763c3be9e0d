// GNN neighbor sampling on the GPU (GARDEN §IV-C, §IV-D): the Super-batch Degree Classifier
// and the grouped parallel sampler. Compiled after the prelude (Philox streams). Every array
// mirrors runtime/src/sample.rs, which defines the output; the CPU and GPU give the same bytes.
//
// Per layer of a super-batch (K merged mini-batches, sub-batch b's destination nodes
// frontier[batch_ptr[b] .. batch_ptr[b+1]]):
//   classify   DegreeFlag (1 = full) and each node's edge count
//   scan       exclusive sums (kernels/scan.cu: flags -> DegreeScan; counts -> edge_ptr)
//   partition  UniqueClassify and BoundPtr (Algorithm 1), no atomics
//   full       copy kernel for full nodes (second stream)
//   random     grouped sampler: g lanes per random node, row staged in shared memory when
//              degree <= Dmax (g = 32 and Dmax = 0 is the one-warp-per-node baseline)
//   frontier   hash table keyed (sub-batch, node) -> first position; new nodes ranked by a
//              scan; local ids for every sampled edge

#define WF_S_EMPTY 0xFFFFFFFFFFFFFFFFull
#define WF_S_BLOCKS_PER_DRAW 16u
#define WF_S_NEIGHBORS 5u

// Lemire's unbiased integer in [0, n) for n <= 2^32, as StepRng::below (same words, same
// rejections).
__device__ __forceinline__ u64 wf_s_below(WfRng& r, u64 n) {
    if (n == 4294967296ull) return (u64)wf_next_u32(r);
    u32 n32 = (u32)n;
    u64 m = (u64)wf_next_u32(r) * (u64)n32;
    if ((u32)m < n32) {
        u32 threshold = (0u - n32) % n32;
        while ((u32)m < threshold) m = (u64)wf_next_u32(r) * (u64)n32;
    }
    return m >> 32;
}

// Draw i of a node's sampling: its own sub-stream (runtime::sample::draw_rng).
__device__ __forceinline__ WfRng wf_s_draw_rng(u64 seed, u64 query, u32 layer, u32 i) {
    WfRng r = wf_rng(seed, query, layer, WF_S_NEIGHBORS);
    r.ctr.x = i * WF_S_BLOCKS_PER_DRAW;
    return r;
}

// The sub-batch holding position x of a prefix array ptr[0..k] (ptr[b] <= x < ptr[b+1]).
template <typename T>
__device__ __forceinline__ u32 wf_s_batch_of(const T* ptr, u32 k, T x) {
    u32 lo = 0, hi = k;  // invariant: ptr[lo] <= x < ptr[hi]
    while (hi - lo > 1) {
        u32 mid = (lo + hi) / 2;
        if (ptr[mid] <= x) lo = mid; else hi = mid;
    }
    return lo;
}

extern "C" __global__ void wf_s_classify(const u32* frontier, u32 n, const u64* offsets, u32 fanout, int with_replacement,
                                         u32* flags, u32* counts) {
    for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        u32 v = frontier[i];
        u64 d = offsets[v + 1] - offsets[v];
        bool full = with_replacement ? d == 0 : d <= fanout;
        flags[i] = full ? 1u : 0u;
        counts[i] = with_replacement ? (d == 0 ? 0u : fanout) : (u32)(d < fanout ? d : fanout);
    }
}

// ---- Algorithm 1: BatchPartition -------------------------------------------------------------

// classified[out] = tid; bound_ptr[b] = batch_ptr[b] + full nodes of b; full_before[b] =
// DegreeScan at b's start (full nodes of the sub-batches before b), for b = 0..k.
extern "C" __global__ void wf_s_partition(const u32* flags, const u64* scan, const u32* batch_ptr, u32 k, u32 n,
                                          u32* classified, u32* bound_ptr, u32* full_before) {
    u32 gid = blockIdx.x * blockDim.x + threadIdx.x;
    if (gid <= k) full_before[gid] = (u32)scan[batch_ptr[gid]];
    if (gid < k) bound_ptr[gid] = batch_ptr[gid] + (u32)(scan[batch_ptr[gid + 1]] - scan[batch_ptr[gid]]);
    for (u32 tid = gid; tid < n; tid += gridDim.x * blockDim.x) {
        u32 b = wf_s_batch_of(batch_ptr, k, tid);
        u32 start = batch_ptr[b];
        u32 pos = (u32)(scan[tid] - scan[start]);
        u32 bound = start + (u32)(scan[batch_ptr[b + 1]] - scan[start]);
        u32 at = flags[tid] ? start + pos : bound + (tid - start - pos);
        classified[at] = tid;
    }
}

// ---- sampling --------------------------------------------------------------------------------

struct WfSampleArgs {
    const u32* frontier;
    const u32* classified;
    const u32* batch_ptr;
    const u32* bound_ptr;
    const u32* full_before;
    const u64* edge_ptr;
    const u64* offsets;
    const u32* targets;   // the whole graph's, or (out of core) the hot rows'
    u64* out_eid;
    u32* out_nbr;
    u32* out_dst;
    u64 seed;
    u32 k;            // sub-batches
    u32 n;            // frontier length
    u32 first_batch;  // global index of sub-batch 0
    u32 layer;
    u32 fanout;
    int with_replacement;
    // Graphs larger than the device budget (null row_base: every row is in `targets` at its
    // offset): row v's edges start at row_base[v], in `targets` below hot_edges, else at
    // row_base[v] - hot_edges (= offsets[v]) in the whole targets array in mapped host memory.
    const u64* row_base;
    u64 hot_edges;
    const u32* cold_targets;
};

// Node v's row of targets (its first edge at graph index `base`).
__device__ __forceinline__ const u32* wf_s_row(const WfSampleArgs& a, u32 v, u64 base) {
    if (!a.row_base) return a.targets + base;
    u64 at = a.row_base[v];
    return at < a.hot_edges ? a.targets + at : a.cold_targets + (at - a.hot_edges);
}

// The frontier index of full node f (0 <= f < full nodes in all), and its sub-batch.
__device__ __forceinline__ u32 wf_s_full_node(const WfSampleArgs& a, u32 f, u32* b) {
    *b = wf_s_batch_of(a.full_before, a.k, f);
    return a.classified[a.batch_ptr[*b] + (f - a.full_before[*b])];
}

// The frontier index of random node r, and its sub-batch (random nodes before b: batch_ptr[b]
// - full_before[b], nondecreasing in b).
__device__ __forceinline__ u32 wf_s_random_node(const WfSampleArgs& a, u32 r, u32* b) {
    u32 lo = 0, hi = a.k;
    while (hi - lo > 1) {
        u32 mid = (lo + hi) / 2;
        if (a.batch_ptr[mid] - a.full_before[mid] <= r) lo = mid; else hi = mid;
    }
    *b = lo;
    return a.classified[a.bound_ptr[lo] + (r - (a.batch_ptr[lo] - a.full_before[lo]))];
}

// Full nodes: every edge, by groups of `group` lanes striding over the row (coalesced).
extern "C" __global__ void wf_s_full(WfSampleArgs a, u32 full_total, u32 group) {
    u32 lane = threadIdx.x & 31, per_warp = 32 / group, g = lane / group, gl = lane % group;
    u32 warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5, warps = (gridDim.x * blockDim.x) >> 5;
    for (u32 f0 = warp * per_warp; f0 < full_total; f0 += warps * per_warp) {
        u32 f = f0 + g;
        if (g >= per_warp || f >= full_total) continue;
        u32 b;
        u32 i = wf_s_full_node(a, f, &b);
        u32 v = a.frontier[i];
        u64 base = a.offsets[v], d = a.offsets[v + 1] - base, at = a.edge_ptr[i];
        u32 local = i - a.batch_ptr[b];
        const u32* row = wf_s_row(a, v, base);
        for (u64 t = gl; t < d; t += group) {
            a.out_eid[at + t] = base + t;
            a.out_nbr[at + t] = row[t];
            a.out_dst[at + t] = local;
        }
    }
}

// Random nodes, fanout <= 32: `group` lanes per node (group >= fanout; lanes past the fanout
// idle), floor(32 / group) nodes per warp. Floyd's draws are made in parallel (draw i on lane
// i, from its own sub-stream), the collisions resolved in draw order with ballots, the picks
// ranked to ascending order. Rows of at most `dmax` edges are first staged in shared memory
// (`dmax` u32 per group) by the group's coalesced loads.
extern "C" __global__ void wf_s_random(WfSampleArgs a, u32 random_total, u32 group, u32 dmax) {
    extern __shared__ u32 stage[];
    u32 lane = threadIdx.x & 31, per_warp = 32 / group, g = lane / group, gl = lane % group;
    u32 warp_in_block = threadIdx.x >> 5;
    u32* mine = stage + (warp_in_block * per_warp + (g < per_warp ? g : 0)) * dmax;
    u32 warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5, warps = (gridDim.x * blockDim.x) >> 5;
    u32 k = a.fanout;
    u32 leader = g * group;
    for (u32 r0 = warp * per_warp; r0 < random_total; r0 += warps * per_warp) {
        u32 r = r0 + g;
        bool active = g < per_warp && r < random_total;
        u32 b = 0, i = 0, v = 0;
        u64 base = 0, d = 0;
        const u32* row = a.targets;
        if (active) {
            i = wf_s_random_node(a, r, &b);
            v = a.frontier[i];
            base = a.offsets[v];
            d = a.offsets[v + 1] - base;
            row = wf_s_row(a, v, base);
        }
        bool staged = active && d <= dmax;
        if (staged)
            for (u64 t = gl; t < d; t += group) mine[t] = row[t];
        __syncwarp();
        bool drawing = active && gl < k;
        u64 query = ((u64)(a.first_batch + b) << 32) | v;
        u64 pick = WF_S_EMPTY;
        if (a.with_replacement) {
            if (drawing) {
                WfRng rng = wf_s_draw_rng(a.seed, query, a.layer, gl);
                pick = wf_s_below(rng, d);
            }
        } else {
            u64 j = d - k + gl, t = 0;
            if (drawing) {
                WfRng rng = wf_s_draw_rng(a.seed, query, a.layer, gl);
                t = wf_s_below(rng, j + 1);
            }
            // Draw order: lane i takes t_i unless an earlier lane of its group took it.
            for (u32 it = 0; it < k; ++it) {
                u64 ti = __shfl_sync(0xffffffffu, t, leader + it < 32 ? leader + it : lane);
                bool clash = drawing && gl < it && pick == ti;
                u32 votes = __ballot_sync(0xffffffffu, clash);
                u32 group_mask = (group == 32 ? 0xffffffffu : ((1u << group) - 1u)) << leader;
                if (drawing && gl == it) pick = (votes & group_mask) ? j : t;
            }
        }
        // Position within the node's output: draw order with replacement, rank without.
        u32 pos = gl;
        if (!a.with_replacement) {
            pos = 0;
            for (u32 m = 0; m < k; ++m) {
                u64 pm = __shfl_sync(0xffffffffu, pick, leader + m < 32 ? leader + m : lane);
                if (pm < pick) ++pos;
            }
        }
        if (drawing) {
            u64 at = a.edge_ptr[i] + pos;
            a.out_eid[at] = base + pick;
            a.out_nbr[at] = staged ? mine[pick] : row[pick];
            a.out_dst[at] = i - a.batch_ptr[b];
        }
        __syncwarp();
    }
}

// Random nodes with a fanout above 32: a thread per node, Floyd sequentially, the node's
// output slots holding the picks (then sorted in place).
extern "C" __global__ void wf_s_random_wide(WfSampleArgs a, u32 random_total) {
    for (u32 r = blockIdx.x * blockDim.x + threadIdx.x; r < random_total; r += gridDim.x * blockDim.x) {
        u32 b;
        u32 i = wf_s_random_node(a, r, &b);
        u32 v = a.frontier[i];
        u64 base = a.offsets[v], d = a.offsets[v + 1] - base, at = a.edge_ptr[i];
        u64 query = ((u64)(a.first_batch + b) << 32) | v;
        u32 k = a.fanout;
        u64* p = a.out_eid + at;
        for (u32 it = 0; it < k; ++it) {
            WfRng rng = wf_s_draw_rng(a.seed, query, a.layer, it);
            if (a.with_replacement) {
                p[it] = wf_s_below(rng, d);
                continue;
            }
            u64 j = d - k + it, t = wf_s_below(rng, j + 1);
            bool seen = false;
            for (u32 m = 0; m < it; ++m) seen |= p[m] == t;
            p[it] = seen ? j : t;
        }
        if (!a.with_replacement)
            for (u32 x = 1; x < k; ++x) {  // insertion sort: k is the fanout
                u64 y = p[x];
                u32 z = x;
                while (z > 0 && p[z - 1] > y) { p[z] = p[z - 1]; --z; }
                p[z] = y;
            }
        const u32* row = wf_s_row(a, v, base);
        for (u32 it = 0; it < k; ++it) {
            a.out_nbr[at + it] = row[p[it]];
            a.out_dst[at + it] = i - a.batch_ptr[b];
            p[it] += base;
        }
    }
}

// ---- frontier: hash table keyed (sub-batch << 32 | node) -> first position -----------------

struct WfTable {
    u64* keys;
    u32* pos;
    u32* local;
    u64 mask;  // capacity - 1 (a power of two)
};

__device__ __forceinline__ u64 wf_s_hash(u64 key) {
    key ^= key >> 33; key *= 0xff51afd7ed558ccdull; key ^= key >> 33; key *= 0xc4ceb9fe1a85ec53ull; key ^= key >> 33;
    return key;
}

__device__ __forceinline__ u64 wf_s_slot(WfTable t, u64 key, bool insert) {
    u64 h = wf_s_hash(key) & t.mask;
    while (true) {
        u64 cur = t.keys[h];
        if (cur == key) return h;
        if (cur == WF_S_EMPTY) {
            if (!insert) return WF_S_EMPTY;
            u64 prev = atomicCAS(&t.keys[h], WF_S_EMPTY, key);
            if (prev == WF_S_EMPTY || prev == key) return h;
        }
        h = (h + 1) & t.mask;
    }
}

// Destination nodes: position = index within the sub-batch.
extern "C" __global__ void wf_s_insert_dst(const u32* frontier, const u32* batch_ptr, u32 k, u32 n, WfTable t) {
    for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        u32 b = wf_s_batch_of(batch_ptr, k, i);
        u64 h = wf_s_slot(t, ((u64)b << 32) | frontier[i], true);
        atomicMin(&t.pos[h], i - batch_ptr[b]);
    }
}

// ebp[b] = edge_ptr[batch_ptr[b]]: where sub-batch b's edges start.
extern "C" __global__ void wf_s_edge_batches(const u64* edge_ptr, const u32* batch_ptr, u32 k, u64* ebp) {
    u32 b = blockIdx.x * blockDim.x + threadIdx.x;
    if (b <= k) ebp[b] = edge_ptr[batch_ptr[b]];
}

// Sampled edges: position = sub-batch's destination count + index among its edges.
extern "C" __global__ void wf_s_insert_edges(const u32* nbr, u64 m, const u64* ebp, const u32* batch_ptr, u32 k, WfTable t) {
    for (u64 j = blockIdx.x * (u64)blockDim.x + threadIdx.x; j < m; j += (u64)gridDim.x * blockDim.x) {
        u32 b = wf_s_batch_of(ebp, k, j);
        u64 h = wf_s_slot(t, ((u64)b << 32) | nbr[j], true);
        atomicMin(&t.pos[h], (batch_ptr[b + 1] - batch_ptr[b]) + (u32)(j - ebp[b]));
    }
}

// newflag[j] = 1 where edge j is its neighbor's first appearance in the sub-batch.
extern "C" __global__ void wf_s_mark_new(const u32* nbr, u64 m, const u64* ebp, const u32* batch_ptr, u32 k, WfTable t, u32* newflag) {
    for (u64 j = blockIdx.x * (u64)blockDim.x + threadIdx.x; j < m; j += (u64)gridDim.x * blockDim.x) {
        u32 b = wf_s_batch_of(ebp, k, j);
        u64 h = wf_s_slot(t, ((u64)b << 32) | nbr[j], false);
        newflag[j] = t.pos[h] == (batch_ptr[b + 1] - batch_ptr[b]) + (u32)(j - ebp[b]) ? 1u : 0u;
    }
}

// next_ptr[b] = batch_ptr[b] + new nodes of the sub-batches before b.
extern "C" __global__ void wf_s_next_ptr(const u32* batch_ptr, const u64* ebp, const u64* nscan, u32 k, u32* next_ptr) {
    u32 b = blockIdx.x * blockDim.x + threadIdx.x;
    if (b <= k) next_ptr[b] = batch_ptr[b] + (u32)nscan[ebp[b]];
}

// The next frontier: each sub-batch's destination nodes, then its new nodes in order of first
// appearance; the table learns every node's local id.
extern "C" __global__ void wf_s_assign(const u32* frontier, const u32* batch_ptr, u32 k, u32 n, const u32* nbr, u64 m,
                                       const u64* ebp, const u64* nscan, const u32* newflag, const u32* next_ptr, WfTable t,
                                       u32* next) {
    u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n; i += stride) {
        u32 b = wf_s_batch_of(batch_ptr, k, (u32)i);
        u32 local = (u32)i - batch_ptr[b];
        u64 h = wf_s_slot(t, ((u64)b << 32) | frontier[i], false);
        t.local[h] = local;
        next[next_ptr[b] + local] = frontier[i];
    }
    for (u64 j = blockIdx.x * (u64)blockDim.x + threadIdx.x; j < m; j += stride) {
        if (!newflag[j]) continue;
        u32 b = wf_s_batch_of(ebp, k, j);
        u32 local = (batch_ptr[b + 1] - batch_ptr[b]) + (u32)(nscan[j] - nscan[ebp[b]]);
        u64 h = wf_s_slot(t, ((u64)b << 32) | nbr[j], false);
        t.local[h] = local;
        next[next_ptr[b] + local] = nbr[j];
    }
}

// Each sampled edge's source: its neighbor's local id.
extern "C" __global__ void wf_s_edge_src(const u32* nbr, u64 m, const u64* ebp, u32 k, WfTable t, u32* edge_src) {
    for (u64 j = blockIdx.x * (u64)blockDim.x + threadIdx.x; j < m; j += (u64)gridDim.x * blockDim.x) {
        u32 b = wf_s_batch_of(ebp, k, j);
        edge_src[j] = t.local[wf_s_slot(t, ((u64)b << 32) | nbr[j], false)];
    }
}

// Empties the table.
extern "C" __global__ void wf_s_clear(WfTable t) {
    for (u64 h = blockIdx.x * (u64)blockDim.x + threadIdx.x; h <= t.mask; h += (u64)gridDim.x * blockDim.x) {
        t.keys[h] = WF_S_EMPTY;
        t.pos[h] = 0xFFFFFFFFu;
    }
}

// A block array as int64 for a consumer such as torch: widened, or mapped through `map` (the
// caller's ids: a graph's original node ids, its input's edge order) when `map` is not null.
extern "C" __global__ void wf_s_to_i64_u32(const u32* in, u64 n, const u64* map, i64* out) {
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n; i += (u64)gridDim.x * blockDim.x) {
        const u32 v = in[i];
        out[i] = map ? (i64)map[v] : (i64)v;
    }
}

extern "C" __global__ void wf_s_to_i64_u64(const u64* in, u64 n, const u64* map, i64* out) {
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n; i += (u64)gridDim.x * blockDim.x) {
        const u64 v = in[i];
        out[i] = map ? (i64)map[v] : (i64)v;
    }
}
