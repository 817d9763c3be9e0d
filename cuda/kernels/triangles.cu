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
// Counting: oriented edge (a -> b) closes one triangle per w in out(a) ∩ out(b). Of the two
// rows, the shorter is scanned and each of its entries looked up in a hash table of the longer,
// held in shared memory: the edge is *owned* by the node of the longer row (a on ties), and
// each owner x gets a list of *partners*, the nodes whose rows are scanned against x's table.
// A warp (rows of at most `warp_rows` entries) or a whole block (longer rows) builds x's table
// once and scans a unit of its partners' rows flattened across the lanes, so short rows keep
// every lane busy. The work is min(|out(a)|, |out(b)|) lookups per edge; a unit's work is
// bounded (its rows are no longer than x's), and units are taken from global counters, block
// units first. A row too long for the block's table is binary-searched instead. Owners whose
// rows are tiny (at most lane_rows <= WF_T_LANE_ROWS entries: most of a flat graph's) skip the tables: a
// thread takes a lane unit, one (owner, partner) pair, loads both rows into registers at once
// and compares every entry of the partner's against the owner's, so 32 of these run side by
// side per warp instead of one after another. Table units and lane units are two kernels, one after the
// other, or one launch (wf_t_count_fused) when the whole count fits in one wave; the table
// kernel comes in two task lengths (wf_t_count, wf_t_count_long), chosen by the host. A small
// graph of short rows (CountTuning::edge_threads) skips all of this: wf_t_count_edges gives
// each thread oriented edges in edge order and merges their two rows, with no lists at all.

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

// ---- owners, partners, units ----------------------------------------------------------------

// (The #ifndef knobs can be swept with WAYFARER_CUDA_DEFINES.)
// Unit sizes and pair probes as swept on the H200 (bench/results/2026-12-05-gpu-triangles-pair-probes.md).
#ifndef WF_T_WARP_UNIT
#define WF_T_WARP_UNIT 32ull     // partners per warp unit
#endif
#ifndef WF_T_BLOCK_UNIT
#define WF_T_BLOCK_UNIT 4096ull  // partners per block unit
#endif
#define WF_T_LANE_ROWS 8         // the longest row a lane unit holds (LANE_ROWS in triangles.rs)
#ifndef WF_T_LANE_UNIT
#define WF_T_LANE_UNIT 2ull      // partners per lane unit
#endif
// WF_T_LANE_PAIRS (on; 0 for units of WF_T_LANE_UNIT partners, a sweep knob): a lane unit is
// one (owner, partner) pair, its list entry holding both nodes, so a thread's loads are two
// levels deep (the rows' offsets, then both rows at once) instead of four (the owner's
// offsets and partner range, the partners, their offsets, their rows).
#ifndef WF_T_LANE_PAIRS
#define WF_T_LANE_PAIRS 1
#endif
#if WF_T_LANE_PAIRS
#define WF_T_LANE_SPAN 1ull
#else
#define WF_T_LANE_SPAN WF_T_LANE_UNIT
#endif
// WF_T_WARP_STATIC (a sweep knob, off until measured on a GPU: 1 to try it): a table block
// skips the block-unit grab when there are none, and table warp w (of W) takes warp-unit
// group w first, without an atomic, then grabs group W + (the counter): on a flat graph's few
// warp units (WordNet: 8, all in the first round) the critical path would lose two atomic
// round trips. Off, the grabs are the measured ones
// (bench/results/2026-12-07-gpu-sampling-out-of-core-and-triangle-lanes-h100.md).
#ifndef WF_T_WARP_STATIC
#define WF_T_WARP_STATIC 0
#endif
#define WF_T_EMPTY 0xffffffffu
#define WF_T_WARPS 8             // warps per block (blocks of 256 threads)
#define WF_T_WARP_SLOTS 1024u    // a warp's table: rows up to 256 entries at load <= 1/4
#ifndef WF_T_TASK
#define WF_T_TASK 4              // consecutive row entries per lane and round (wf_t_count)
#endif
#ifndef WF_T_TASK_LONG
#define WF_T_TASK_LONG 5         // the same for wf_t_count_long (graphs with block units)
#endif

// Oriented edge e (a -> b): its owner (the node of the longer row, a on ties), the partner whose
// row is scanned, and that row's length (0: the edge closes no triangle).
__device__ __forceinline__ void wf_t_owner(const u64* offsets, const u32* targets, const u32* src, u64 e, u32& owner, u32& partner, u32& len) {
    u32 a = src[e], b = targets[e];
    u64 la = offsets[a + 1] - offsets[a], lb = offsets[b + 1] - offsets[b];
    bool at_a = lb <= la;
    owner = at_a ? a : b;
    partner = at_a ? b : a;
    // Oriented rows are at most sqrt(2m) long, far below 2^32.
    len = (u32)(at_a ? lb : la);
}

__device__ __forceinline__ u64 wf_t_warp_sum(u64 x) {
    for (int o = 16; o > 0; o >>= 1) x += __shfl_down_sync(0xffffffffu, x, o);
    return x;
}

// cost[x] += the lookups (plus one) of every edge x owns (splitting the work over GPUs).
extern "C" __global__ void wf_t_owner_cost(const u64* offsets, const u32* targets, const u32* src, u64 m, u64* cost) {
    u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 e = blockIdx.x * (u64)blockDim.x + threadIdx.x; e < m; e += stride) {
        u32 owner, partner, len;
        wf_t_owner(offsets, targets, src, e, owner, partner, len);
        if (len) atomicAdd((unsigned long long*)&cost[owner], (unsigned long long)len + 1ull);
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

// counts[x] = the partners of owner x (owners in [lo, hi) only); lookups[0] += their rows'
// total length.
extern "C" __global__ void wf_t_owner_count(const u64* offsets, const u32* targets, const u32* src, u64 m, u64 lo, u64 hi, u32* counts, u64* lookups) {
    u64 stride = (u64)gridDim.x * blockDim.x, mine = 0;
    for (u64 e = blockIdx.x * (u64)blockDim.x + threadIdx.x; e < m; e += stride) {
        u32 owner, partner, len;
        wf_t_owner(offsets, targets, src, e, owner, partner, len);
        if (len && owner >= lo && owner < hi) {
            atomicAdd(&counts[owner], 1u);
            mine += len;
        }
    }
    u64 s = wf_t_warp_sum(mine);
    if ((threadIdx.x & 31) == 0 && s) atomicAdd((unsigned long long*)lookups, (unsigned long long)s);
}

// partners[poff[x] ..] = owner x's partners, in no particular order (counts[x] counts down to 0).
extern "C" __global__ void wf_t_owner_fill(const u64* offsets, const u32* targets, const u32* src, u64 m, u64 lo, u64 hi, const u64* poff, u32* counts, u32* partners) {
    u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 e = blockIdx.x * (u64)blockDim.x + threadIdx.x; e < m; e += stride) {
        u32 owner, partner, len;
        wf_t_owner(offsets, targets, src, e, owner, partner, len);
        if (len && owner >= lo && owner < hi) {
            u32 k = atomicSub(&counts[owner], 1u) - 1u;
            partners[poff[owner] + k] = partner;
        }
    }
}

// Units of work: owner x with a row of at most lane_rows entries gets ceil(partners / LU)
// lane units (LU = WF_T_LANE_SPAN), one of at most warp_rows entries ceil(partners / WU) warp units, a longer one
// ceil(partners / BU) block units; longest[0] = the longest block row.
extern "C" __global__ void wf_t_unit_count(const u64* offsets, const u64* poff, u64 lo, u64 hi, u32 lane_rows, u32 warp_rows, u32* warp_units, u32* block_units, u32* lane_units, u32* longest) {
    u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 x = lo + blockIdx.x * (u64)blockDim.x + threadIdx.x; x < hi; x += stride) {
        u64 p = poff[x + 1] - poff[x];
        u64 d = offsets[x + 1] - offsets[x];
        if (p == 0) continue;
        if (d <= lane_rows) {
            lane_units[x] = (u32)((p + WF_T_LANE_SPAN - 1) / WF_T_LANE_SPAN);
        } else if (d <= warp_rows) {
            warp_units[x] = (u32)((p + WF_T_WARP_UNIT - 1) / WF_T_WARP_UNIT);
        } else {
            block_units[x] = (u32)((p + WF_T_BLOCK_UNIT - 1) / WF_T_BLOCK_UNIT);
            atomicMax(longest, (u32)d);
        }
    }
}

// The unit lists: node x in the low 32 bits, the unit's index within x's partners above (a
// lane pair, WF_T_LANE_PAIRS: the partner itself above).
extern "C" __global__ void wf_t_unit_fill(const u64* offsets, const u64* poff, u64 lo, u64 hi, u32 lane_rows, u32 warp_rows, const u64* warp_at, const u64* block_at, const u64* lane_at, u64* warp_list, u64* block_list, u64* lane_list, const u32* partners) {
    u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 x = lo + blockIdx.x * (u64)blockDim.x + threadIdx.x; x < hi; x += stride) {
        u64 p = poff[x + 1] - poff[x];
        if (p == 0) continue;
        u64 d = offsets[x + 1] - offsets[x];
#if WF_T_LANE_PAIRS
        if (d <= lane_rows) {
            for (u64 k = 0; k < p; ++k) lane_list[lane_at[x] + k] = x | ((u64)__ldg(&partners[poff[x] + k]) << 32);
            continue;
        }
#else
        (void)partners;
#endif
        u64 unit = d <= lane_rows ? WF_T_LANE_UNIT : d <= warp_rows ? WF_T_WARP_UNIT : WF_T_BLOCK_UNIT;
        u64* out = d <= lane_rows ? lane_list + lane_at[x] : d <= warp_rows ? warp_list + warp_at[x] : block_list + block_at[x];
        for (u64 k = 0; k * unit < p; ++k) out[k] = x | (k << 32);
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

struct WfTriCount {
    const u64* offsets;    // oriented rows
    const u32* targets;
    const u64* poff;       // per owner: its partners' range in `partners`
    const u32* partners;
    const u64* warp_units; // (node, unit) lists, see wf_t_unit_fill
    u64 warp_count;
    const u64* block_units;
    u64 block_count;
    const u64* lane_units;
    u64 lane_count;
    u64* next;             // [0]: block units taken, [1]: groups of warp units, [2]: of lane units (WF_T_LANE_GRAB)
    u64* total;            // one counter
    u64* per_node;         // or null
    u32 block_slots;       // slots of the block's table in shared memory (a power of two)
    u32 warp_group;        // warp units a warp takes per counter increment (1 ..= WARP_GROUP in triangles.rs)
    u32 table_blocks;      // wf_t_count_fused: its blocks below this take table units
};


__device__ __forceinline__ u64 wf_t_min(u64 a, u64 b) { return a < b ? a : b; }

__device__ __forceinline__ u32 wf_t_slot(u32 v, u32 bits) { return (v * 2654435769u) >> (32 - bits); }

// WF_T_PAIR_PROBES (on; 0 for the single-slot probes, a sweep knob): tables at load 1/8 where
// they fit, probed two slots per 8-byte load (linear probing from the even slot at or below the
// hash), so a lookup nearly always stops after its first load (R-MAT 20 counting -21% on the
// H200). An entry is inserted at the first empty slot from the even start, so a pair with an
// empty slot ends the probe: slots are never emptied.
#ifndef WF_T_PAIR_PROBES
#define WF_T_PAIR_PROBES 1
#endif
#if WF_T_PAIR_PROBES
#define WF_T_LOAD_SHIFT 3
#define WF_T_START(h) ((h) & ~1u)
#else
#define WF_T_LOAD_SHIFT 2
#define WF_T_START(h) (h)
#endif

// The table's size (log2) for a row of d entries within `slots`: load at most 1/4 (1/8 with
// pair probes) where that fits, down to 1/2; 0 when even that does not fit (the row is
// searched instead).
__device__ __forceinline__ u32 wf_t_table_bits(u64 d, u32 slots) {
    u32 bits = 5;
    while ((1ull << bits) < (d << WF_T_LOAD_SHIFT)) ++bits;
    while (bits > 5 && (1u << bits) > slots && (1ull << (bits - 1)) >= 2 * d) --bits;
    return (1u << bits) <= slots ? bits : 0;
}

// Whether v is in the row: a lookup in the table (bits > 0; linear probing), else a binary
// search of the row.
__device__ __forceinline__ bool wf_t_has(const u32* tab, u32 bits, const u32* row, u64 d, u32 v) {
    if (bits) {
        u32 mask = (1u << bits) - 1u, h = WF_T_START(wf_t_slot(v, bits));
        while (true) {
#if WF_T_PAIR_PROBES
            uint2 k = *reinterpret_cast<const uint2*>(tab + h);  // tables start 8-byte aligned
            if (k.x == v || k.y == v) return true;
            if (k.x == WF_T_EMPTY || k.y == WF_T_EMPTY) return false;
            h = (h + 2) & mask;
#else
            u32 k = tab[h];
            if (k == v) return true;
            if (k == WF_T_EMPTY) return false;
            h = (h + 1) & mask;
#endif
        }
    }
    u64 p = wf_lower_bound(row, 0, d, v);
    return p < d && __ldg(&row[p]) == v;
}

// Threads `first`, `first + step`, ... insert the row into the table (cleared before).
__device__ __forceinline__ void wf_t_insert(u32* tab, u32 bits, const u32* row, u64 d, u32 first, u32 step) {
    u32 mask = (1u << bits) - 1u;
    for (u64 i = first; i < d; i += step) {
        u32 v = __ldg(&row[i]), h = WF_T_START(wf_t_slot(v, bits));
        while (atomicCAS(&tab[h], WF_T_EMPTY, v) != WF_T_EMPTY) h = (h + 1) & mask;
    }
}

// One warp: up to 32 partners partners[i0 .. i1) of owner x, their rows cut into tasks of
// TASK consecutive entries and the tasks flattened over the lanes (lane q of a round takes
// the q-th task of the concatenated rows), so short rows keep every lane busy and each lane has
// TASK loads in flight; each entry is looked up in x's table. Returns this lane's hits.
template <int TASK>
__device__ __forceinline__ u64 wf_t_scan_partners(const WfTriCount& t, u32 x, const u32* tab, u32 bits, const u32* row, u64 d, u64 i0, u64 i1) {
    u32 lane = threadIdx.x & 31;
    u64 i = i0 + lane;
    bool have = i < i1;
    u32 p = have ? __ldg(&t.partners[i]) : 0u;
    u64 op = have ? t.offsets[p] : 0;
    // A partner's row is no longer than x's (at most sqrt(2m)), so 32 of them fit in 32 bits.
    u32 lp = have ? (u32)(t.offsets[p + 1] - op) : 0u;
    u32 tasks = (lp + TASK - 1) / TASK;
    u32 incl = tasks;
    for (int o = 1; o < 32; o <<= 1) {
        u32 y = __shfl_up_sync(0xffffffffu, incl, o);
        if (lane >= (u32)o) incl += y;
    }
    u32 start = incl - tasks, total = __shfl_sync(0xffffffffu, incl, 31);
    // In entries of the flattened rows: the row's entry at flattened position f is
    // targets[base + f], and the row ends before flattened position `end`.
    u64 base = op - (u64)start * TASK;
    u32 end = start * TASK + lp;
    u32 le = (2u << lane) - 1u;
    u64 hits = 0;
    // Every partner has a non-empty row, so partners occupy lanes 0.. in order and start at
    // distinct tasks: task q's partner is (partners starting at or before q) - 1.
    for (u32 t0 = 0; t0 < total; t0 += 32) {
        u32 here = __reduce_or_sync(0xffffffffu, (have && start >= t0 && start - t0 < 32) ? 1u << (start - t0) : 0u);
        u32 before = __popc(__ballot_sync(0xffffffffu, have && start < t0));
        u32 src_lane = (before + __popc(here & le) - 1u) & 31u;
        u64 b = __shfl_sync(0xffffffffu, base, src_lane);
        u32 e = __shfl_sync(0xffffffffu, end, src_lane);
        u32 owner_partner = t.per_node ? __shfl_sync(0xffffffffu, p, src_lane) : 0u;
        u32 q = t0 + lane, f0 = q * TASK;
        if (q >= total) e = 0;
        u32 v[TASK];
#pragma unroll
        for (int j = 0; j < TASK; ++j) v[j] = f0 + j < e ? __ldg(&t.targets[b + f0 + j]) : 0u;
#pragma unroll
        for (int j = 0; j < TASK; ++j) {
            if (f0 + j < e && wf_t_has(tab, bits, row, d, v[j])) {
                ++hits;
                if (t.per_node) {
                    atomicAdd((unsigned long long*)&t.per_node[v[j]], 1ull);
                    atomicAdd((unsigned long long*)&t.per_node[x], 1ull);
                    atomicAdd((unsigned long long*)&t.per_node[owner_partner], 1ull);
                }
            }
        }
    }
    return hits;
}

// The table units (block units, then warp units) a block takes; its triangles found. `smem` is
// the block's dynamic shared memory, `unit_s` and `batch_s` its shared counters.
// `table_block` is the block's index among the `table_blocks` blocks taking table units.
template <int TASK>
__device__ __forceinline__ u64 wf_t_table_units(const WfTriCount& t, u32* wf_t_smem, u64& unit_s, u32& batch_s, u64 table_block, u64 table_blocks) {
    u32 lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    u64 hits = 0;
    // Block units first (the longest rows): the block's table is all of shared memory, and its
    // warps take the unit's batches of 32 partners as they finish the last. (t.block_count is
    // the same for every thread: the test keeps the block's barriers uniform.)
    while (!WF_T_WARP_STATIC || t.block_count > 0) {
        if (threadIdx.x == 0) {
            unit_s = atomicAdd((unsigned long long*)&t.next[0], 1ull);
            batch_s = 0;
        }
        __syncthreads();
        u64 k = unit_s;
        if (k >= t.block_count) break;
        u64 u = t.block_units[k];
        u32 x = (u32)u;
        u64 ox = t.offsets[x], d = t.offsets[x + 1] - ox;
        const u32* row = t.targets + ox;
        u32 bits = wf_t_table_bits(d, t.block_slots);
        if (bits) {
            for (u32 i = threadIdx.x; i < (1u << bits); i += blockDim.x) wf_t_smem[i] = WF_T_EMPTY;
            __syncthreads();
            wf_t_insert(wf_t_smem, bits, row, d, threadIdx.x, blockDim.x);
        }
        __syncthreads();
        u64 i0 = t.poff[x] + (u >> 32) * WF_T_BLOCK_UNIT, i1 = wf_t_min(t.poff[x + 1], i0 + WF_T_BLOCK_UNIT);
        while (true) {
            u32 batch = 0;
            if (lane == 0) batch = atomicAdd(&batch_s, 1u);
            u64 i = i0 + 32ull * __shfl_sync(0xffffffffu, batch, 0);
            if (i >= i1) break;
            hits += wf_t_scan_partners<TASK>(t, x, wf_t_smem, bits, row, d, i, wf_t_min(i1, i + 32));
        }
        __syncthreads();  // the table is rebuilt, and unit_s rewritten, only after every warp is done
    }
    // Then warp units: each warp its own table.
    u32* tab = wf_t_smem + warp * WF_T_WARP_SLOTS;
    u64 table_warps = table_blocks * WF_T_WARPS;
    for (bool first = true;; first = false) {
        u64 g = 0;
        if (WF_T_WARP_STATIC && first) g = table_block * WF_T_WARPS + warp;
        else if (lane == 0) g = atomicAdd((unsigned long long*)&t.next[1], 1ull) + (WF_T_WARP_STATIC ? table_warps : 0);
        u64 k0 = __shfl_sync(0xffffffffu, g, 0) * t.warp_group;
        if (k0 >= t.warp_count) break;
        for (u64 k = k0; k < wf_t_min(k0 + t.warp_group, t.warp_count); ++k) {
            u64 u = t.warp_units[k];
            u32 x = (u32)u;
            u64 ox = t.offsets[x], d = t.offsets[x + 1] - ox;
            const u32* row = t.targets + ox;
            u32 bits = wf_t_table_bits(d, WF_T_WARP_SLOTS);
            for (u32 i = lane; i < (1u << bits); i += 32) tab[i] = WF_T_EMPTY;
            __syncwarp();
            wf_t_insert(tab, bits, row, d, lane, 32);
            __syncwarp();
            u64 i0 = t.poff[x] + (u >> 32) * WF_T_WARP_UNIT, i1 = wf_t_min(t.poff[x + 1], i0 + WF_T_WARP_UNIT);
            for (u64 i = i0; i < i1; i += 32) hits += wf_t_scan_partners<TASK>(t, x, tab, bits, row, d, i, wf_t_min(i1, i + 32));
            __syncwarp();
        }
    }
    return hits;
}

// A warp's hits added to the total.
__device__ __forceinline__ void wf_t_add_total(const WfTriCount& t, u64 hits) {
    u64 s = wf_t_warp_sum(hits);
    if ((threadIdx.x & 31) == 0 && s) atomicAdd((unsigned long long*)t.total, (unsigned long long)s);
}

extern "C" __global__ void __launch_bounds__(256) wf_t_count(WfTriCount t) {
    extern __shared__ __align__(16) u32 wf_t_smem[];
    __shared__ u64 unit_s;
    __shared__ u32 batch_s;
    wf_t_add_total(t, wf_t_table_units<WF_T_TASK>(t, wf_t_smem, unit_s, batch_s, blockIdx.x, gridDim.x));
}

// The same with longer tasks, for graphs whose hub rows take block units: their partners' rows
// are long, and five loads in flight per lane beat four (R-MAT 20 -3%, R-MAT 22 -4% on an
// H100), where a flat graph's rows of ~16 entries would pad a fifth of every task (Erdős–Rényi
// +4%).
extern "C" __global__ void __launch_bounds__(256) wf_t_count_long(WfTriCount t) {
    extern __shared__ __align__(16) u32 wf_t_smem[];
    __shared__ u64 unit_s;
    __shared__ u32 batch_s;
    wf_t_add_total(t, wf_t_table_units<WF_T_TASK_LONG>(t, wf_t_smem, unit_s, batch_s, blockIdx.x, gridDim.x));
}

// Whether v is among row[0 .. d) (d <= WF_T_LANE_ROWS, the row in registers): every entry
// compared, without a branch on the values.
__device__ __forceinline__ bool wf_t_in_lane_row(const u32 (&row)[WF_T_LANE_ROWS], u32 d, u32 v) {
    bool hit = false;
#pragma unroll
    for (int q = 0; q < WF_T_LANE_ROWS; ++q) hit |= (u32)q < d && row[q] == v;
    return hit;
}

// A hit of owner x, partner p and their common neighbour v, counted.
__device__ __forceinline__ void wf_t_lane_hit(const WfTriCount& t, u32 x, u32 p, u32 v) {
    if (t.per_node) {
        atomicAdd((unsigned long long*)&t.per_node[v], 1ull);
        atomicAdd((unsigned long long*)&t.per_node[x], 1ull);
        atomicAdd((unsigned long long*)&t.per_node[p], 1ull);
    }
}

#if WF_T_LANE_PAIRS
// One lane pair: owner x's row and partner p's (no longer) both loaded at once, then every
// entry of p's compared against x's.
__device__ __forceinline__ u64 wf_t_lane_unit(const WfTriCount& t, u64 u) {
    u32 x = (u32)u, p = (u32)(u >> 32);
    u64 ox = t.offsets[x], op = t.offsets[p];
    u32 d = (u32)(t.offsets[x + 1] - ox), lp = (u32)(t.offsets[p + 1] - op);
    u32 xr[WF_T_LANE_ROWS], e[WF_T_LANE_ROWS];
#pragma unroll
    for (int j = 0; j < WF_T_LANE_ROWS; ++j) {
        xr[j] = (u32)j < d ? __ldg(&t.targets[ox + j]) : 0u;
        e[j] = (u32)j < lp ? __ldg(&t.targets[op + j]) : 0u;
    }
    u64 hits = 0;
#pragma unroll
    for (int f = 0; f < WF_T_LANE_ROWS; ++f) {
        if ((u32)f >= lp) break;
        if (wf_t_in_lane_row(xr, d, e[f])) {
            ++hits;
            wf_t_lane_hit(t, x, p, e[f]);
        }
    }
    return hits;
}
#else
// One lane unit: owner x's row in registers, up to WF_T_LANE_UNIT of its partners' rows
// compared against it entry by entry.
__device__ __forceinline__ u64 wf_t_lane_unit(const WfTriCount& t, u64 u) {
    u32 x = (u32)u;
    u64 ox = t.offsets[x];
    u32 d = (u32)(t.offsets[x + 1] - ox);
    u32 xr[WF_T_LANE_ROWS];
#pragma unroll
    for (int j = 0; j < WF_T_LANE_ROWS; ++j) xr[j] = (u32)j < d ? __ldg(&t.targets[ox + j]) : 0u;
    u64 i0 = t.poff[x] + (u >> 32) * WF_T_LANE_UNIT, i1 = wf_t_min(t.poff[x + 1], i0 + WF_T_LANE_UNIT);
    // Every load of the unit issued before its results are needed: the partners, their
    // rows' bounds, then their entries (a partner's row is no longer than x's).
    u32 p[WF_T_LANE_UNIT];
    u64 op[WF_T_LANE_UNIT];
    u32 lp[WF_T_LANE_UNIT];
#pragma unroll
    for (int j = 0; j < (int)WF_T_LANE_UNIT; ++j) p[j] = i0 + j < i1 ? __ldg(&t.partners[i0 + j]) : x;
#pragma unroll
    for (int j = 0; j < (int)WF_T_LANE_UNIT; ++j) {
        op[j] = t.offsets[p[j]];
        lp[j] = i0 + j < i1 ? (u32)(t.offsets[p[j] + 1] - op[j]) : 0u;
    }
    u32 e[WF_T_LANE_UNIT][WF_T_LANE_ROWS];
#pragma unroll
    for (int j = 0; j < (int)WF_T_LANE_UNIT; ++j)
#pragma unroll
        for (int f = 0; f < WF_T_LANE_ROWS; ++f) e[j][f] = (u32)f < lp[j] ? __ldg(&t.targets[op[j] + f]) : 0u;
    u64 hits = 0;
#pragma unroll
    for (int j = 0; j < (int)WF_T_LANE_UNIT; ++j) {
#pragma unroll
        for (int f = 0; f < WF_T_LANE_ROWS; ++f) {
            if ((u32)f >= lp[j]) break;
            if (wf_t_in_lane_row(xr, d, e[j][f])) {
                ++hits;
                wf_t_lane_hit(t, x, p[j], e[j][f]);
            }
        }
    }
    return hits;
}
#endif

// WF_T_LANE_GRAB (0, the default): thread i of the lane grid takes lane units i, i + stride,
// ...; a lane unit's work is bounded (at most WF_T_LANE_SPAN rows of at most WF_T_LANE_ROWS
// entries), so the static split balances as well as grabbing, without it. 1 (a sweep knob):
// warps grab 32 units at a time from one global counter, whose atomics on one address
// serialize (WordNet's 92k lane units of two partners: 2.9k grabs).
#ifndef WF_T_LANE_GRAB
#define WF_T_LANE_GRAB 0
#endif

// Lane units, one per thread (a kernel of its own, after wf_t_count: its registers would cost
// the table kernel occupancy). `first` is the thread's index in the lane grid, `stride` that
// grid's threads.
__device__ __forceinline__ u64 wf_t_lane_units(const WfTriCount& t, u64 first, u64 stride) {
    u64 hits = 0;
#if WF_T_LANE_GRAB
    (void)first; (void)stride;
    u32 lane = threadIdx.x & 31;
    while (true) {
        u64 g = 0;
        if (lane == 0) g = atomicAdd((unsigned long long*)&t.next[2], 1ull);
        u64 k = __shfl_sync(0xffffffffu, g, 0) * 32;
        if (k >= t.lane_count) break;
        k += lane;
        if (k < t.lane_count) hits += wf_t_lane_unit(t, t.lane_units[k]);
    }
#else
    for (u64 k = first; k < t.lane_count; k += stride) hits += wf_t_lane_unit(t, t.lane_units[k]);
#endif
    return hits;
}

extern "C" __global__ void __launch_bounds__(256) wf_t_count_lanes(WfTriCount t) {
    wf_t_add_total(t, wf_t_lane_units(t, blockIdx.x * (u64)blockDim.x + threadIdx.x, (u64)gridDim.x * blockDim.x));
}

// Both in one launch, for a count whose units all fit in one wave (a flat graph's few table
// units beside its lane units): blocks below t.table_blocks take table units, the others lane
// units, side by side instead of one kernel after the other. Its registers are the larger
// kernel's, which costs nothing when the whole grid is resident at once.
extern "C" __global__ void __launch_bounds__(256) wf_t_count_fused(WfTriCount t) {
    extern __shared__ __align__(16) u32 wf_t_smem[];
    __shared__ u64 unit_s;
    __shared__ u32 batch_s;
    if (blockIdx.x < t.table_blocks) wf_t_add_total(t, wf_t_table_units<WF_T_TASK>(t, wf_t_smem, unit_s, batch_s, blockIdx.x, t.table_blocks));
    else wf_t_add_total(t, wf_t_lane_units(t, (blockIdx.x - t.table_blocks) * (u64)blockDim.x + threadIdx.x, (u64)(gridDim.x - t.table_blocks) * blockDim.x));
}

// ---- small flat graphs: a thread per oriented edge ---------------------------------------------

// out[0] = the longest oriented row.
extern "C" __global__ void wf_t_longest_row(const u64* offsets, u64 n, u32* out) {
    u64 stride = (u64)gridDim.x * blockDim.x;
    u32 best = 0;
    for (u64 x = blockIdx.x * (u64)blockDim.x + threadIdx.x; x < n; x += stride) {
        u64 d = offsets[x + 1] - offsets[x];
        best = d > best ? (u32)(d < 0xffffffffull ? d : 0xffffffffull) : best;
    }
    for (int o = 16; o > 0; o >>= 1) best = max(best, __shfl_down_sync(0xffffffffu, best, o));
    if ((threadIdx.x & 31) == 0 && best) atomicMax(out, best);
}

// A small graph whose rows are all short (CountTuning::edge_threads): thread k takes oriented
// edges k, k + stride, ... in edge order, each (a -> b) closing a triangle per w in both
// ascending rows, found by merging them. No owner, partner or unit list is built, and only
// warps that found triangles touch the total (a lookup count summed the same way, one atomic
// per warp on one address, cost 2 µs of WordNet's 10).
extern "C" __global__ void __launch_bounds__(256) wf_t_count_edges(const u64* offsets, const u32* targets, const u32* src, u64 m, u64* total, u64* per_node) {
    u64 stride = (u64)gridDim.x * blockDim.x, hits = 0;
    for (u64 e = blockIdx.x * (u64)blockDim.x + threadIdx.x; e < m; e += stride) {
        u32 a = __ldg(&src[e]), b = __ldg(&targets[e]);
        u64 oa = offsets[a], ob = offsets[b];
        u32 la = (u32)(offsets[a + 1] - oa), lb = (u32)(offsets[b + 1] - ob), i = 0, j = 0, found = 0;
        while (i < la && j < lb) {
            u32 x = __ldg(&targets[oa + i]), y = __ldg(&targets[ob + j]);
            if (x == y) {
                ++found;
                if (per_node) atomicAdd((unsigned long long*)&per_node[x], 1ull);
            }
            i += x <= y;
            j += y <= x;
        }
        if (found && per_node) {
            atomicAdd((unsigned long long*)&per_node[a], (unsigned long long)found);
            atomicAdd((unsigned long long*)&per_node[b], (unsigned long long)found);
        }
        hits += found;
    }
    hits = wf_t_warp_sum(hits);
    if ((threadIdx.x & 31) == 0 && hits) atomicAdd((unsigned long long*)total, (unsigned long long)hits);
}
