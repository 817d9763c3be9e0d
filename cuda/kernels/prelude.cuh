// wayfarer CUDA prelude: the runtime's semantics in CUDA C, shared by every generated kernel.
// Self-contained (no headers), so NVRTC compiles it without the CUDA include tree.
//
// Semantics mirror the CPU backend exactly (runtime/src/rng.rs, walk.rs, compiler IR docs):
// - Philox4x32-10 streams keyed (seed, query, step, purpose): the same numbers as StepRng.
// - Integer arithmetic wraps; integer division or remainder by 0 gives 0.
// - Float -> int casts saturate and map NaN to 0 (Rust `as`).
// - Graph queries on non-nodes (e.g. NO_NODE) give false / 0.

typedef unsigned int u32;
typedef int i32;
typedef unsigned long long u64;
typedef long long i64;

#define WF_NO_NODE 0xFFFFFFFFu
#define WF_INIT_STEP 0xFFFFFFFFu

enum WfPurpose { WF_SAMPLE = 0, WF_UPDATE = 1, WF_INIT = 2, WF_GENERATE = 3, WF_PROFILE = 4 };

// ---- Philox4x32-10 -------------------------------------------------------------------------

struct WfU32x4 { u32 x, y, z, w; };

__device__ __forceinline__ WfU32x4 wf_philox(WfU32x4 c, u32 k0, u32 k1) {
    #pragma unroll
    for (int r = 0; r < 10; ++r) {
        if (r > 0) { k0 += 0x9E3779B9u; k1 += 0xBB67AE85u; }
        u32 hi0 = __umulhi(0xD2511F53u, c.x), lo0 = 0xD2511F53u * c.x;
        u32 hi1 = __umulhi(0xCD9E8D57u, c.z), lo1 = 0xCD9E8D57u * c.z;
        WfU32x4 n = { hi1 ^ c.y ^ k0, lo1, hi0 ^ c.w ^ k1, lo0 };
        c = n;
    }
    return c;
}

// The stream for (seed, query, step, purpose), drawn in order like the CPU's StepRng.
struct WfRng {
    u32 k0, k1;
    WfU32x4 ctr;
    WfU32x4 buf;
    int used;
};

__device__ __forceinline__ WfRng wf_rng(u64 seed, u64 query, u32 step, u32 purpose) {
    WfRng r;
    r.k0 = (u32)seed; r.k1 = (u32)(seed >> 32);
    r.ctr.x = 0; r.ctr.y = step; r.ctr.z = (u32)query;
    r.ctr.w = ((u32)(query >> 32) & 0x00FFFFFFu) | (purpose << 24);
    r.used = 4;
    return r;
}

__device__ __forceinline__ u32 wf_next_u32(WfRng& r) {
    if (r.used == 4) { r.buf = wf_philox(r.ctr, r.k0, r.k1); r.ctr.x += 1; r.used = 0; }
    u32 v = r.used == 0 ? r.buf.x : r.used == 1 ? r.buf.y : r.used == 2 ? r.buf.z : r.buf.w;
    r.used += 1;
    return v;
}

// Uniform in (0, 1): (x + 0.5) / 2^32, never 0 or 1.
__device__ __forceinline__ double wf_uniform(WfRng& r) {
    return ((double)wf_next_u32(r) + 0.5) * (1.0 / 4294967296.0);
}

// ---- Rust semantics for scalar operations ----------------------------------------------------

__device__ __forceinline__ i32 wf_iadd(i32 a, i32 b) { return (i32)((u32)a + (u32)b); }
__device__ __forceinline__ i32 wf_isub(i32 a, i32 b) { return (i32)((u32)a - (u32)b); }
__device__ __forceinline__ i32 wf_imul(i32 a, i32 b) { return (i32)((u32)a * (u32)b); }
__device__ __forceinline__ i32 wf_ineg(i32 a) { return (i32)(0u - (u32)a); }
__device__ __forceinline__ i32 wf_iabs(i32 a) { return a < 0 ? wf_ineg(a) : a; }
__device__ __forceinline__ i32 wf_idiv(i32 a, i32 b) {
    if (b == 0) return 0;
    if (b == -1) return wf_ineg(a);  // i32::MIN / -1 wraps
    return a / b;
}
__device__ __forceinline__ i32 wf_irem(i32 a, i32 b) { return (b == 0 || b == -1) ? 0 : a % b; }
__device__ __forceinline__ u32 wf_udiv(u32 a, u32 b) { return b == 0 ? 0u : a / b; }
__device__ __forceinline__ u32 wf_urem(u32 a, u32 b) { return b == 0 ? 0u : a % b; }

__device__ __forceinline__ u32 wf_f2u(double x) {
    if (!(x > 0.0)) return 0u;              // negatives and NaN
    if (x >= 4294967295.0) return 0xFFFFFFFFu;
    return (u32)x;
}
__device__ __forceinline__ i32 wf_f2i(double x) {
    if (x != x) return 0;
    if (x <= -2147483648.0) return (i32)0x80000000u;
    if (x >= 2147483647.0) return 2147483647;
    return (i32)x;
}

// Rust's f32::min / max: the non-NaN operand if one is NaN (as fminf / fmaxf).
__device__ __forceinline__ float wf_minf(float a, float b) { return fminf(a, b); }
__device__ __forceinline__ float wf_maxf(float a, float b) { return fmaxf(a, b); }
__device__ __forceinline__ double wf_mind(double a, double b) { return fmin(a, b); }
__device__ __forceinline__ double wf_maxd(double a, double b) { return fmax(a, b); }
__device__ __forceinline__ i32 wf_imin(i32 a, i32 b) { return a < b ? a : b; }
__device__ __forceinline__ i32 wf_imax(i32 a, i32 b) { return a > b ? a : b; }
__device__ __forceinline__ u32 wf_umin(u32 a, u32 b) { return a < b ? a : b; }
__device__ __forceinline__ u32 wf_umax(u32 a, u32 b) { return a > b ? a : b; }

// An array hyperparameter at `i`, or 0 out of range (Rust's `get(i).unwrap_or(0)`).
template <typename T, unsigned N>
__device__ __forceinline__ T wf_at(const T (&a)[N], u32 i) { return i < N ? a[i] : (T)0; }

// ---- The graph and the per-node arrays -------------------------------------------------------

struct WfGraph {
    u32 num_nodes;
    const u64* offsets;       // num_nodes + 1
    const u32* targets;
    const uint2* edges;       // (target, weight bits) per edge, one 8-byte load; null if unweighted
    const float* weights;     // null: every weight is 1
    const u32* labels;        // null: every label is 0
    const i64* timestamps;    // null: every time is 0
    // Per-node aggregates (null when the walk does not need them). `node_w` holds (max, min,
    // sum, 0) of each row's weights together: the bound and the estimate of a step read one
    // 16-byte entry instead of three scattered floats.
    const float4* node_w;
    const float* weight_max;
    const float* weight_min;
    const float* weight_sum;
    u32 label_k;
    // (max, sum, count bits, 0) of each row's edges per label l < label_k, entry v * label_k + l:
    // a step's bound and estimate read one 16-byte entry (Ctx::label_query).
    const float4* label_stats;
    const u32* nbr_degree_max;
    const u32* nbr_degree_min;
    const float* const* node_props;  // one array per property the walk names
    // Hub rows as bitmaps: has_edge(u, v) for a hub u is one bit test instead of a binary
    // search of a long row (null: no hubs).
    const u32* hub_slot;      // per node: its bitmap's index, or ~0u
    const u32* hub_bits;      // hub_words 32-bit words per hub
    u64 hub_words;
    // Graphs larger than device memory (null cold_targets: everything is in device memory).
    // Edge indices are then virtual: the hot rows' edges sit in device memory at
    // [0, hot_edges) (targets, weights, labels, timestamps above); a cold row v's edge i is
    // hot_edges + offsets[v] + i, read from the whole graph's arrays in mapped, page-locked
    // host memory (cold_*) over the bus. row_base[v] is where v's row starts.
    const u64* row_base;
    u64 hot_edges;
    const u32* cold_targets;
    const float* cold_weights;  // null: every weight is 1
    const u32* cold_labels;
    const i64* cold_times;
    // Structured proposals (runtime/src/proposal.rs; has_tables 0: none built, in-memory
    // graphs only). Per term k: its alias entries [threshold, keep, alias] (3 words each, at
    // the edge's position; null: a uniform slot) and its static factor's sums per row or per
    // (row, label) segment (null: the term's sums are counts or computed per step). The label
    // segments: each row's edge offsets in label order, and where label l's segment of row v
    // starts, seg_starts[v * (seg_k + 1) + l]. multiplicity: the most parallel edges.
    const u32* term_entries0;
    const u32* term_entries1;
    const u32* term_entries2;
    const u32* term_entries3;
    const double* term_sums0;
    const double* term_sums1;
    const double* term_sums2;
    const double* term_sums3;
    const u32* seg_order;
    const u32* seg_starts;
    const u64* table_at;    // where row v's per-edge slots start (null: at offsets[v])
    u32 seg_k;
    u32 multiplicity;
    u32 has_tables;
    u32 table_min_degree;   // shorter rows have no tables (their steps take eRJS or eRVS)
    // Row signatures (null: none): per node, WF_SIG_WORDS words with bit wf_sig_hash(x) set
    // for each neighbour x. A clear bit proves has_edge(u, x) false without searching u's
    // row; a set one leaves the search to decide (exact either way). A hub row's words are
    // instead its flag (bit 0 of word 0, which no hash sets) and its bitmap's slot (word 1);
    // a mid-length row's (flags WF_SIG_HUB | WF_SIG_WIDE) the slot of its wide signature.
    const u32* row_sig;
    // Wide signatures (null: none): WF_WIDE_WORDS words per mid-length row, bit
    // wf_wide_hash(x) set for each neighbour x (a 256-bit signature of a row of 100 entries
    // has a third of its bits set; 2048 bits, a twentieth).
    const u32* wide_sig;
};

#define WF_SIG_WORDS 8
// Word 0's bit 0 in a row signature: the row is a hub (word 1 holds its bitmap's slot), or
// with bit 1 as well, a mid-length row (word 1 holds its wide signature's slot).
#define WF_SIG_HUB 1u
#define WF_SIG_WIDE 2u
#define WF_WIDE_WORDS 64
__device__ __forceinline__ u32 wf_wide_hash(u32 x) { return (x * 0x9E3779B1u) >> 21; }
// Which of a signature's bits stands for node x (Fibonacci hashing: the top 8 bits; bit 0,
// the hub flag, is never one: hash 0 shares bit 1).
__device__ __forceinline__ u32 wf_sig_hash(u32 x) {
    const u32 h = (x * 0x9E3779B1u) >> 24;
    return h | (h == 0u);
}
#ifdef WF_BROKEN_ROW_SIGNATURES
#define WF_SIG_BIT(x) wf_sig_hash((x) + 1u)  // deliberately the wrong bit: tests of the exactness suite only
#define WF_WIDE_BIT(x) wf_wide_hash((x) + 1u)
#else
#define WF_SIG_BIT(x) wf_sig_hash(x)
#define WF_WIDE_BIT(x) wf_wide_hash(x)
#endif

enum { WF_COND_ALL = 0, WF_COND_LABEL = 1, WF_COND_BACK = 2, WF_COND_PREV_NEIGHBOR = 3 };

struct WfWalkerBase {
    u32 start, cur, prev, step;
    u64 last_edge;
    // cur's weight aggregates (max, min, sum, 0), read at the step's start (wf_enter).
    float4 cw;
};

__device__ __forceinline__ u32 wf_degree(const WfGraph& g, u32 v) {
    if (v >= g.num_nodes) return 0u;
    u64 d = g.offsets[v + 1] - g.offsets[v];
    return d > 0xFFFFFFFFull ? 0xFFFFFFFFu : (u32)d;
}

// The device's one search over a sorted row (walks' has_edge, triangle counting): the first
// index in [lo, hi) whose entry is >= v, or hi.
__device__ __forceinline__ u64 wf_lower_bound(const u32* a, u64 lo, u64 hi, u32 v) {
    while (lo < hi) {
        u64 mid = lo + ((hi - lo) >> 1);
        if (__ldg(&a[mid]) < v) lo = mid + 1; else hi = mid;
    }
    return lo;
}

// Loads of the per-node arrays a walk step reads (row offsets, row signatures, hub bitmaps).
// WF_L2_KEEP (a sweep knob, off by default, not yet measured): an L2 evict-last policy on
// them, so the targets array streaming through L2 (read evict-first) does not push them out.
#ifdef WF_L2_KEEP
__device__ __forceinline__ u64 wf_keep_policy() {
    u64 p;
    asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(p));
    return p;
}
__device__ __forceinline__ u64 wf_ld_node(const u64* a) {
    u64 v;
    asm("ld.global.nc.L2::cache_hint.u64 %0, [%1], %2;" : "=l"(v) : "l"(a), "l"(wf_keep_policy()));
    return v;
}
__device__ __forceinline__ u32 wf_ld_node(const u32* a) {
    u32 v;
    asm("ld.global.nc.L2::cache_hint.u32 %0, [%1], %2;" : "=r"(v) : "l"(a), "l"(wf_keep_policy()));
    return v;
}
__device__ __forceinline__ uint2 wf_ld_node(const uint2* a) {
    uint2 v;
    asm("ld.global.nc.L2::cache_hint.v2.u32 {%0, %1}, [%2], %3;" : "=r"(v.x), "=r"(v.y) : "l"(a), "l"(wf_keep_policy()));
    return v;
}
#define WF_LD_OFFSET(p) wf_ld_node(p)
#define WF_LD_SIG(p) wf_ld_node(p)
#else
#define WF_LD_OFFSET(p) (*(p))
#define WF_LD_SIG(p) __ldg(p)
#endif

// Sweep knobs (off by default, not yet measured): a prefetch into L1 holds no register, unlike
// a load whose value waits for its use (WF_SPEC_NEXT's registers made it slower everywhere).
// WF_PF_SIG=1: prev's row signature at a step's start, for has_edge(prev, x) once x is read;
// WF_PF_SIG=2: cur's, a step ahead.
// WF_PF_NEXT: the candidate's row offsets as soon as it is read, for the next step.
__device__ __forceinline__ void wf_prefetch_l1(const void* p) {
    asm volatile("prefetch.global.L1 [%0];" ::"l"(p));
}

// Hub rows as bitmaps (walks' has_edge, triangle counting): whether bitmap `slot` (of `words`
// 32-bit words each) has bit v.
__device__ __forceinline__ bool wf_hub_bit(const u32* bits, u64 words, u32 slot, u32 v) {
    return (WF_LD_SIG(&bits[(u64)slot * words + (v >> 5)]) >> (v & 31)) & 1u;
}

// Block-strided: bitmap k (of `count`) gets the bits of row hubs[k] (bits zeroed before).
__device__ __forceinline__ void wf_fill_hub_bits(const u64* offsets, const u32* targets, const u32* hubs, u32 count, u32* bits, u64 words) {
    for (u32 k = blockIdx.x; k < count; k += gridDim.x) {
        const u32 v = hubs[k];
        u32* row = bits + (u64)k * words;
        for (u64 e = offsets[v] + threadIdx.x; e < offsets[v + 1]; e += blockDim.x) {
            const u32 t = targets[e];
            atomicOr(&row[t >> 5], 1u << (t & 31));
        }
    }
}

// Whether edge e lives in host memory, and the (virtual) index of v's first edge. Only the
// out-of-core build of a walk (WF_OUT_OF_CORE, compiled when a graph does not fit) pays for
// the test; otherwise it folds away.
#ifdef WF_OUT_OF_CORE
__device__ __forceinline__ bool wf_cold(const WfGraph& g, u64 e) { return g.cold_targets && e >= g.hot_edges; }
__device__ __forceinline__ u64 wf_row_base(const WfGraph& g, u32 v) { return g.row_base ? g.row_base[v] : g.offsets[v]; }
#else
__device__ __forceinline__ bool wf_cold(const WfGraph&, u64) { return false; }
__device__ __forceinline__ u64 wf_row_base(const WfGraph& g, u32 v) { return g.offsets[v]; }
#endif

// First index of `v` in `u`'s sorted row, or ~0ull.
__device__ __forceinline__ u64 wf_find_edge(const WfGraph& g, u32 u, u32 v) {
    if (u >= g.num_nodes || v >= g.num_nodes) return ~0ull;
#ifdef WF_OUT_OF_CORE
    u64 base = wf_row_base(g, u), d = g.offsets[u + 1] - g.offsets[u];
    const u32* row = wf_cold(g, base) ? g.cold_targets + (base - g.hot_edges) : g.targets + base;
    u64 lo = wf_lower_bound(row, 0, d, v);
    return (lo < d && row[lo] == v) ? base + lo : ~0ull;
#else
    u64 end = g.offsets[u + 1];
    u64 lo = wf_lower_bound(g.targets, g.offsets[u], end, v);
    return (lo < end && g.targets[lo] == v) ? lo : ~0ull;
#endif
}

// has_edge(u, v): with signatures, one sector of u's signature says whether u is a hub (then
// its bitmap answers), a mid-length row (then its wide signature may prove v absent) or
// neither (then its own bits may): a search of the row decides only what they leave open,
// and the common "absent" costs one or two loads. Without signatures (out of core), the hub
// slot and then the search.
__device__ __forceinline__ bool wf_has_edge(const WfGraph& g, u32 u, u32 v) {
    if (u >= g.num_nodes || v >= g.num_nodes) return false;
    if (g.row_sig) {
        const u32* s = g.row_sig + (u64)u * WF_SIG_WORDS;
        const u32 h = WF_SIG_BIT(v);
        // Both loads at once: the row's head (flags, slot) and v's word share a sector.
        const uint2 head = WF_LD_SIG(reinterpret_cast<const uint2*>(s));
        const u32 word = WF_LD_SIG(s + (h >> 5));
        if (head.x & WF_SIG_HUB) {
            if (!(head.x & WF_SIG_WIDE)) return wf_hub_bit(g.hub_bits, g.hub_words, head.y, v);
            const u32 h2 = WF_WIDE_BIT(v);
            if (!((WF_LD_SIG(&g.wide_sig[(u64)head.y * WF_WIDE_WORDS + (h2 >> 5)]) >> (h2 & 31)) & 1u)) return false;
        } else if (!((word >> (h & 31)) & 1u)) {
            return false;
        }
        return wf_find_edge(g, u, v) != ~0ull;
    }
    if (g.hub_slot) {
        u32 slot = __ldg(&g.hub_slot[u]);
        if (slot != 0xFFFFFFFFu) return wf_hub_bit(g.hub_bits, g.hub_words, slot, v);
    }
    return wf_find_edge(g, u, v) != ~0ull;
}

// A walker arrives at b.cur (a new step): cur's weight aggregates, read once for the step's
// bound and estimate (one 16-byte load, not one per use).
__device__ __forceinline__ void wf_enter(const WfGraph& g, WfWalkerBase& b) {
    const u32 v = b.cur;
    // Every weight 1: (1, 1, d) follow from the row's offsets, which the step reads anyway
    // (one dependent load fewer a step: unweighted Node2Vec -13%, DeepWalk -22% on an H100,
    // bench/results/2026-12-05-gpu-kernel-switches.md).
    if (g.node_w && !g.edges && !g.weights) {
        const u64 d = WF_LD_OFFSET(&g.offsets[v + 1]) - WF_LD_OFFSET(&g.offsets[v]);
        const float one = d > 0 ? 1.0f : 0.0f;
        b.cw = make_float4(one, one, (float)d, 0.0f);
        return;
    }
    if (g.node_w) b.cw = __ldg(g.node_w + v);
    else if (g.weight_max) b.cw = make_float4(g.weight_max[v], g.weight_min[v], g.weight_sum[v], 0.0f);
    else b.cw = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
}

__device__ __forceinline__ float wf_h(const WfGraph& g, u64 e) {
    if (wf_cold(g, e)) return g.cold_weights ? g.cold_weights[e - g.hot_edges] : 1.0f;
    return g.edges ? __uint_as_float(__ldg(&g.edges[e].y)) : g.weights ? g.weights[e] : 1.0f;
}
__device__ __forceinline__ u32 wf_dst(const WfGraph& g, u64 e) {
    if (wf_cold(g, e)) return g.cold_targets[e - g.hot_edges];
    // A random entry of a targets array much larger than L2 is seldom read again: evict it
    // first, so the per-node arrays and signatures stay. Not an interleaved (target, weight)
    // pair: its weight is read next, from the same line.
    return g.edges ? __ldg(&g.edges[e].x) : __ldcs(&g.targets[e]);
}
__device__ __forceinline__ u32 wf_label(const WfGraph& g, u64 e) {
    if (wf_cold(g, e)) return g.cold_labels ? g.cold_labels[e - g.hot_edges] : 0u;
    return g.labels ? g.labels[e] : 0u;
}
__device__ __forceinline__ double wf_time(const WfGraph& g, u64 e) {
    if (wf_cold(g, e)) return g.cold_times ? (double)g.cold_times[e - g.hot_edges] : 0.0;
    return g.timestamps ? (double)g.timestamps[e] : 0.0;
}
__device__ __forceinline__ float wf_prop(const WfGraph& g, u32 p, u32 v) {
    return (v < g.num_nodes && g.node_props && g.node_props[p]) ? g.node_props[p][v] : 0.0f;
}

__device__ __forceinline__ float wf_wmax(const WfGraph& g, u32 v) { return g.node_w ? __ldg(&g.node_w[v]).x : g.weight_max[v]; }
__device__ __forceinline__ float wf_wmin(const WfGraph& g, u32 v) { return g.node_w ? __ldg(&g.node_w[v]).y : g.weight_min[v]; }
__device__ __forceinline__ float wf_wsum(const WfGraph& g, u32 v) { return g.node_w ? __ldg(&g.node_w[v]).z : g.weight_sum[v]; }

// Largest weight among the edges cur -> prev and their count (Ctx::back_edges).
__device__ __forceinline__ float wf_back_weight(const WfGraph& g, u32 cur, u32 prev, u32* count) {
    float w = 0.0f; u32 n = 0;
    u64 e = wf_find_edge(g, cur, prev);
    if (e != ~0ull) {
#ifdef WF_OUT_OF_CORE
        u64 end = wf_row_base(g, cur) + (g.offsets[cur + 1] - g.offsets[cur]);
        for (; e < end && wf_dst(g, e) == prev; ++e) { w = fmaxf(w, wf_h(g, e)); ++n; }
#else
        u64 end = g.offsets[cur + 1];
        for (; e < end && g.targets[e] == prev; ++e) { w = fmaxf(w, wf_h(g, e)); ++n; }
#endif
    }
    if (count) *count = n;
    return w;
}

__device__ __forceinline__ u32 wf_back_count(const WfGraph& g, u32 cur, u32 prev) {
    u32 n = 0;
    wf_back_weight(g, cur, prev, &n);
    return n;
}

// (max, sum, count) of cur's edges labelled `label` (Ctx::label_query): whole-row values
// without per-label arrays.
__device__ __forceinline__ float wf_label_max(const WfGraph& g, u32 cur, u32 l) {
    if (g.label_k == 0) return wf_wmax(g, cur);
    return l < g.label_k ? g.label_stats[(u64)cur * g.label_k + l].x : 0.0f;
}
__device__ __forceinline__ float wf_label_sum(const WfGraph& g, u32 cur, u32 l) {
    if (g.label_k == 0) return wf_wsum(g, cur);
    return l < g.label_k ? g.label_stats[(u64)cur * g.label_k + l].y : 0.0f;
}
__device__ __forceinline__ u32 wf_label_count(const WfGraph& g, u32 cur, u32 l) {
    if (g.label_k == 0) return wf_degree(g, cur);
    return l < g.label_k ? __float_as_uint(g.label_stats[(u64)cur * g.label_k + l].z) : 0u;
}
