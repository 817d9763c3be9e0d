// Triangle counting on the GPU over the oriented, masked graph built by the host
// (runtime/src/triangles.rs: rows ascending, each undirected kept edge once, from its
// lower-ranked end). Edge (a -> b) closes one triangle per w in out(a) ∩ out(b).
//
// Two kernels, chosen per edge by the rows' lengths (the split-edge idea): edges whose rows
// are short go to wf_t_edges (a thread per edge, grid-stride over the flattened edge list,
// a sequential merge); edges with a long row go to wf_t_edges_warp (a warp per edge: lanes
// stride over the shorter row and binary-search the longer one with wf_lower_bound, the
// prelude's search that the walks' has_edge uses too). Compiled after the prelude. Per-node counts, when asked for, are atomic adds; the total is reduced per
// warp, then one atomic add.

struct WfTri {
    const u64* offsets;  // oriented rows
    const u32* targets;
    const u32* src;      // per oriented edge: its row
    const u64* edges;    // the edges this launch takes (indices into targets)
    u64 count;           // how many
    u64* total;          // one counter
    u64* per_node;       // or null
};

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
        u64 found = 0;
        for (u64 i = lane; i < ls; i += 32) {
            u32 v = __ldg(&s[i]);
            u64 p = wf_lower_bound(l, 0, ll, v);
            if (p < ll && __ldg(&l[p]) == v) {
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
