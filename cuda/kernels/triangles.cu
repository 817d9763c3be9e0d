// Triangle counting on the GPU (cuda/src/triangles.rs drives it). Compiled after the prelude
// and kernels/scan.cu; with an edge mask (WF_TRI_MASK), also after the mask's generated
// device functions (wf_weight) and the walk's preprocessing kernels.
//
// Orientation (undirected input, on the device): every edge {u, v} is kept once, from its
// lower-ranked end by (degree, id), if the mask keeps it (self loops and parallel copies
// dropped; the mask sees the first copy in the lower-ranked end's row) — the same rule as
// runtime/src/triangles.rs, whose `Oriented` rows these kernels rebuild: a count pass, a scan
// of the counts, a fill pass (a warp per row, kept edges placed by ballot ranks, so rows stay
// ascending).
//
// Counting: edge (a -> b) closes one triangle per w in out(a) ∩ out(b).
//
// Two kernels, chosen per edge by the rows' lengths (the split-edge idea): edges whose rows
// are short go to wf_t_edges (a thread per edge, grid-stride over the flattened edge list,
// a sequential merge); edges with a long row go to wf_t_edges_warp (a warp per edge: lanes
// stride over the shorter row and test each entry against the longer one: a bit test when
// the longer row is one of the bitmaps built for the longest rows, else a binary search with
// wf_lower_bound — the prelude's has_edge primitives, shared with the walks). Per-node
// counts, when asked for, are atomic adds; the total is reduced per warp, then one atomic add.

// ---- orientation ---------------------------------------------------------------------------

struct WfTriOrient {
    const u64* offsets;      // the input CSR (undirected)
    const u32* targets;
    u64 n;
    u32* counts;             // count pass: kept edges per row
    const u64* out_offsets;  // fill pass: the oriented rows
    u32* out_targets;
    u32* out_src;            // per oriented edge: its row
    u64* bad;                // a mask's bad weights: [0] how many, [1] row, [2] edge, [3] the float's bits
};

__device__ __forceinline__ bool wf_t_below(const u64* off, u32 u, u32 v) {
    u64 du = off[u + 1] - off[u], dv = off[v + 1] - off[v];
    return du < dv || (du == dv && u < v);
}

// Whether edge e of row u (the row starting at `first`) is kept in the oriented graph.
__device__ __forceinline__ bool wf_t_keep(const WfTriOrient& o, const void* gp, const void* pp, u32 u, u64 e, u64 first) {
    u32 v = o.targets[e];
    if (v == u || !wf_t_below(o.offsets, u, v)) return false;
    bool keep = true;
#ifdef WF_TRI_MASK
    // What a walker standing on u at step 0 weighs the edge (as the CPU's with_edge_weight).
    WfWalker w;
    w.b.start = u; w.b.cur = u; w.b.prev = WF_NO_NODE; w.b.step = 0; w.b.last_edge = ~0ull;
    wf_enter(*(const WfGraph*)gp, w.b);
    memset(&w.s, 0, sizeof(w.s));
    float x = wf_weight(*(const WfGraph*)gp, *(const WfParams*)pp, w, e, wf_dst(*(const WfGraph*)gp, e));
    if (!(x >= 0.0f)) {
        if (atomicAdd((unsigned long long*)&o.bad[0], 1ull) == 0) {
            o.bad[1] = u; o.bad[2] = e; o.bad[3] = __float_as_uint(x);
        }
    }
    keep = x > 0.0f;
#else
    (void)gp; (void)pp;
#endif
    // A parallel copy: the first copy decided (the mask still ran, for its errors).
    return keep && !(e > first && o.targets[e - 1] == v);
}

template <bool FILL>
__device__ __forceinline__ void wf_t_orient_rows(const WfTriOrient& o, const void* gp, const void* pp) {
    u32 lane = threadIdx.x & 31;
    u64 warp = (blockIdx.x * (u64)blockDim.x + threadIdx.x) >> 5, warps = ((u64)gridDim.x * blockDim.x) >> 5;
    for (u64 u = warp; u < o.n; u += warps) {
        u64 first = o.offsets[u], end = o.offsets[u + 1];
        u64 pos = FILL ? o.out_offsets[u] : 0;
        for (u64 base = first; base < end; base += 32) {
            u64 e = base + lane;
            bool k = e < end && wf_t_keep(o, gp, pp, (u32)u, e, first);
            u32 ballot = __ballot_sync(0xffffffffu, k);
            if (FILL && k) {
                u64 at = pos + __popc(ballot & ((1u << lane) - 1u));
                o.out_targets[at] = o.targets[e];
                o.out_src[at] = (u32)u;
            }
            pos += __popc(ballot);
        }
        if (!FILL && lane == 0) o.counts[u] = (u32)pos;
    }
}

extern "C" __global__ void wf_t_orient_count(WfTriOrient o, const void* gp, const void* pp) { wf_t_orient_rows<false>(o, gp, pp); }
extern "C" __global__ void wf_t_orient_fill(WfTriOrient o, const void* gp, const void* pp) { wf_t_orient_rows<true>(o, gp, pp); }

// ---- splitting the work (several GPUs) and the two kernels' edge lists ------------------------

// Mirrors cuda/src/triangles.rs `edge_cost`.
__device__ __forceinline__ u64 wf_t_edge_cost(u64 la, u64 lb) {
    if (la + lb <= WF_T_WARP_EDGE) return 1 + la + lb;
    u64 s = la < lb ? la : lb, l = la < lb ? lb : la;
    return 8 * (1 + (s + 31) / 32) * (u64)(64 - __clzll((long long)l));
}

// cost[a] = the estimated work of a's oriented edges (a warp per row).
extern "C" __global__ void wf_t_row_cost(const u64* offsets, const u32* targets, u64 n, u64* cost) {
    u32 lane = threadIdx.x & 31;
    u64 warp = (blockIdx.x * (u64)blockDim.x + threadIdx.x) >> 5, warps = ((u64)gridDim.x * blockDim.x) >> 5;
    for (u64 a = warp; a < n; a += warps) {
        u64 first = offsets[a], end = offsets[a + 1], c = 0;
        for (u64 e = first + lane; e < end; e += 32) {
            u32 b = targets[e];
            c += wf_t_edge_cost(end - first, offsets[b + 1] - offsets[b]);
        }
        for (int o = 16; o > 0; o >>= 1) c += __shfl_down_sync(0xffffffffu, c, o);
        if (lane == 0) cost[a] = c;
    }
}

// cuts[p] = the first node whose cost prefix reaches total * p / parts (p = 1 .. parts - 1).
extern "C" __global__ void wf_t_cuts(const u64* prefix, u64 n, u32 parts, u64* cuts) {
    u32 p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p == 0) { cuts[0] = 0; cuts[parts] = n; }
    if (p == 0 || p >= parts) return;
    u64 total = prefix[n];
    u64 goal = total / parts * p + total % parts * p / parts;  // floor(total * p / parts), no overflow
    u64 lo = 0, hi = n + 1;  // first i in [0, n] with prefix[i] >= goal
    while (lo < hi) {
        u64 mid = (lo + hi) / 2;
        if (prefix[mid] < goal) lo = mid + 1; else hi = mid;
    }
    cuts[p] = lo;
}

// heavy[i] = 1 when oriented edge first + i goes to the warp kernel.
extern "C" __global__ void wf_t_classify(const u64* offsets, const u32* targets, const u32* src, u64 first, u64 count, u32* heavy) {
    u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < count; i += stride) {
        u64 e = first + i;
        u32 a = src[e], b = targets[e];
        heavy[i] = (offsets[a + 1] - offsets[a]) + (offsets[b + 1] - offsets[b]) > WF_T_WARP_EDGE;
    }
}

// The two kernels' edge lists, in edge order: light[i - rank] or heavy[rank].
extern "C" __global__ void wf_t_scatter(const u32* heavy, const u64* rank, u64 first, u64 count, u64* light_list, u64* heavy_list) {
    u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < count; i += stride) {
        if (heavy[i]) heavy_list[rank[i]] = first + i;
        else light_list[i - rank[i]] = first + i;
    }
}

// Each node's kept distinct neighbors (its oriented out- plus in-degree).
extern "C" __global__ void wf_t_degree(const u32* targets, const u32* src, u64 m, u64* degree) {
    u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 e = blockIdx.x * (u64)blockDim.x + threadIdx.x; e < m; e += stride) {
        atomicAdd((unsigned long long*)&degree[src[e]], 1ull);
        atomicAdd((unsigned long long*)&degree[targets[e]], 1ull);
    }
}

// ---- counting --------------------------------------------------------------------------------

struct WfTri {
    const u64* offsets;  // oriented rows
    const u32* targets;
    const u32* src;      // per oriented edge: its row
    const u64* edges;    // the edges this launch takes (indices into targets)
    u64 count;           // how many
    u64* total;          // one counter
    u64* per_node;       // or null
    const u32* hub_slot; // per node: 1 + its oriented row's bitmap, or 0 (null: no bitmaps)
    const u32* hub_bits;
    u64 hub_words;
};

// Bitmaps of the longest oriented rows (the host picks them by length).
extern "C" __global__ void wf_t_hub_bits(const u64* offsets, const u32* targets, const u32* hubs, u32 count, u32* bits, u64 words, u32* slot) {
    if (blockIdx.x == 0)
        for (u32 k = threadIdx.x; k < count; k += blockDim.x) slot[hubs[k]] = k + 1;
    wf_fill_hub_bits(offsets, targets, hubs, count, bits, words);
}

__device__ __forceinline__ u64 wf_t_warp_sum(u64 x) {
    for (int o = 16; o > 0; o >>= 1) x += __shfl_down_sync(0xffffffffu, x, o);
    return x;
}

extern "C" __global__ void wf_t_edges(WfTri t) {
    u64 mine = 0;
    u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 k = blockIdx.x * (u64)blockDim.x + threadIdx.x; k < t.count; k += stride) {
        u64 e = t.edges[k];
        u32 a = t.src[e], b = t.targets[e];
        const u32* ra = t.targets + t.offsets[a];
        const u32* rb = t.targets + t.offsets[b];
        u64 la = t.offsets[a + 1] - t.offsets[a], lb = t.offsets[b + 1] - t.offsets[b];
        u64 i = 0, j = 0, found = 0;
        while (i < la && j < lb) {
            u32 x = __ldg(&ra[i]), y = __ldg(&rb[j]);
            if (x == y) {
                ++found;
                if (t.per_node) atomicAdd(&t.per_node[x], 1ull);
            }
            i += x <= y;
            j += y <= x;
        }
        if (found && t.per_node) {
            atomicAdd(&t.per_node[a], found);
            atomicAdd(&t.per_node[b], found);
        }
        mine += found;
    }
    u64 s = wf_t_warp_sum(mine);
    if ((threadIdx.x & 31) == 0 && s) atomicAdd(t.total, s);
}

extern "C" __global__ void wf_t_edges_warp(WfTri t) {
    u32 lane = threadIdx.x & 31;
    u64 warp = (blockIdx.x * (u64)blockDim.x + threadIdx.x) >> 5, warps = ((u64)gridDim.x * blockDim.x) >> 5;
    u64 mine = 0;
    for (u64 k = warp; k < t.count; k += warps) {
        u64 e = t.edges[k];
        u32 a = t.src[e], b = t.targets[e];
        const u32* ra = t.targets + t.offsets[a];
        const u32* rb = t.targets + t.offsets[b];
        u64 la = t.offsets[a + 1] - t.offsets[a], lb = t.offsets[b + 1] - t.offsets[b];
        const u32* s = la <= lb ? ra : rb;
        const u32* l = la <= lb ? rb : ra;
        u64 ls = la <= lb ? la : lb, ll = la <= lb ? lb : la;
        // The longer row as a bitmap when it has one (one load per test), else searched.
        u32 slot = t.hub_slot ? __ldg(&t.hub_slot[la <= lb ? b : a]) : 0u;
        u64 found = 0;
        for (u64 i = lane; i < ls; i += 32) {
            u32 v = __ldg(&s[i]);
            bool hit;
            if (slot) {
                hit = wf_hub_bit(t.hub_bits, t.hub_words, slot - 1, v);
            } else {
                u64 p = wf_lower_bound(l, 0, ll, v);
                hit = p < ll && __ldg(&l[p]) == v;
            }
            if (hit) {
                ++found;
                if (t.per_node) atomicAdd(&t.per_node[v], 1ull);
            }
        }
        u64 edge_total = wf_t_warp_sum(found);
        edge_total = __shfl_sync(0xffffffffu, edge_total, 0);
        if (lane == 0 && edge_total && t.per_node) {
            atomicAdd(&t.per_node[a], edge_total);
            atomicAdd(&t.per_node[b], edge_total);
        }
        mine += found;
    }
    u64 s = wf_t_warp_sum(mine);
    if (lane == 0 && s) atomicAdd(t.total, s);
}
