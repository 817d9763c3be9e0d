// wayfarer walk kernel: a persistent grid fed by a global query counter; each lane holds one
// walker; the adaptive rule picks eRJS (the lane alone: uniform proposals, accept w/B) or eRVS
// (the whole warp: ballot finds the lanes that chose it, the warp serves each in turn with
// exponential-key reservoir sampling with jumps over the row, coalesced, and a warp argmin)
// at every step.
//
// Spliced after prelude.cuh and the generated device functions (WfParams, WfWalker,
// wf_weight, wf_bound, wf_estimate, wf_init, wf_update, wf_stop, WF_* flags).
//
// Same streams as the CPU: (seed, query, step, purpose). eRJS steps consume the Sample stream
// exactly as the CPU engine does (Lemire proposals, f64 levels, the same trial cap); eRVS
// lanes draw from counter blocks 2^31 + lane * 2^24 + k of the step's Sample stream, so eRVS
// steps are exact but not the CPU's choices (the CPU's A-ExpJ scans the row in order).

struct WfRunArgs {
    u64 first_query;      // global index of this batch's first query
    u64 num_queries;      // queries in this batch
    u64 seed;
    u32 length;
    u32 mode;             // 0 adaptive, 1 eRJS only (eRVS as the trial-cap fallback), 2 eRVS only,
                          // 3 structured trials wherever the tables serve the step (else eRJS)
    double ratio, fixed, ratio_short;
    u32 short_row;
    u32 per_node_starts;  // 1: start = q mod n; 0: starts[q]
    const u32* starts;
    u32* out;             // num_queries x (length + 1), NO_NODE padded
    u32* lens;            // nodes per walk
    u64* counter;         // next batch-relative query
    u64* stats;           // WF_STAT_*
    u64* error;           // [code, query, step, edge, weight bits]
    const u64* query_ids; // the WF_QUERY_IDS build: query q is global query query_ids[q]
                          // (a GPU's share of a batch split over several GPUs)
    double struct_cost;   // a structured trial's cost in eRJS trials (the adaptive rule)
    u64* out_edges;       // null, or num_queries x length: the edge behind each move (the walk's
                          // last_edge after update; WF_NO_EDGE for a restart or teleport and
                          // past the walk's end)
};

#define WF_NO_EDGE 0xFFFFFFFFFFFFFFFFull

// A launch's query q is global query first_query + q; a GPU's share of a batch split over
// several GPUs (the WF_QUERY_IDS build) reads it from query_ids. One GPU's build has no such
// load or test in its loop.
#ifdef WF_QUERY_IDS
// An exhausted lane's q is past the list: never read there.
#define WF_GLOBAL_QUERY(a, q) ((q) < (a).num_queries ? (a).query_ids[q] : 0ull)
#else
#define WF_GLOBAL_QUERY(a, q) ((a).first_query + (q))
#endif

enum { WF_STAT_ERJS = 0, WF_STAT_ERVS, WF_STAT_TRIALS, WF_STAT_FALLBACKS, WF_STAT_DEAD_ENDS, WF_STAT_STOPPED, WF_STAT_STEPS, WF_STAT_ERVS_EDGES,
       WF_STAT_S_STEPS, WF_STAT_S_TRIALS, WF_STAT_S_FALLBACKS, WF_NUM_STATS };
enum { WF_ERR_NONE = 0, WF_ERR_BAD_WEIGHT = 1, WF_ERR_BOUND = 2 };

#define WF_FULL 0xFFFFFFFFu

// A lane's counters: counter i of lane L at slot i * 256 + L of a block's array (a warp's
// lanes touch consecutive words).
struct WfLaneStats {
    u64* slot;
    __device__ __forceinline__ u64& operator[](int i) const { return slot[i * 256]; }
};

__device__ __forceinline__ void wf_report(const WfRunArgs& a, u64 code, u64 q, u32 step, u64 e, float w, float bound) {
    if (atomicCAS((unsigned long long*)a.error, 0ull, (unsigned long long)code) == 0ull) {
        a.error[1] = q; a.error[2] = step; a.error[3] = e;
        a.error[4] = (u64)__float_as_uint(w) | ((u64)__float_as_uint(bound) << 32);
    }
}

// Lemire's unbiased bounded draw, 32-bit path (rows up to 2^32 - 1 edges), as StepRng::below.
__device__ __forceinline__ u32 wf_below(WfRng& r, u32 n) {
    u64 m = (u64)wf_next_u32(r) * (u64)n;
    if ((u32)m < n) {
        u32 threshold = (0u - n) % n;
        while ((u32)m < threshold) m = (u64)wf_next_u32(r) * (u64)n;
    }
    return (u32)(m >> 32);
}

__device__ __forceinline__ bool wf_prefers_reservoir(const WfRunArgs& a, u32 d, float bound, float estimate) {
    double r = d <= a.short_row ? a.ratio_short : a.ratio;
    return r * (double)d * (double)bound > (double)estimate * ((double)d + a.fixed);
}

__device__ __forceinline__ u32 wf_trial_cap(const WfRunArgs& a, u32 d) {
    double r = d <= a.short_row ? a.ratio_short : a.ratio;
    double c = 2.0 * ((double)d + a.fixed) / fmax(r, 1e-3);
    return (u32)fmin(fmax(c, 32.0), 1e9);
}

// Broadcasts any trivially copyable value from lane `src` to the warp, 32 bits at a time.
template <typename T>
__device__ __forceinline__ T wf_shfl(const T& v, int src) {
    constexpr int N = (sizeof(T) + 3) / 4;
    union U { T t; u32 w[N]; } in, out;
    in.t = v;
    #pragma unroll
    for (int i = 0; i < N; ++i) out.w[i] = __shfl_sync(WF_FULL, in.w[i], src);
    return out.t;
}

// ---- Structured proposals (runtime/src/proposal.rs, the same draws in the same order) -----
// A trial picks term k with probability M_k / M, draws an edge from term k's proposal (an
// alias table of its static factor over the row or the label's segment, the edges back, or a
// uniform edge of prev's row looked up in cur's) and accepts it with probability w(e) / E(e),
// E the envelope sum_k R_k s_k(e) [c_k(e)] widened by 2^-16. Every edge is then proposed with
// probability E(e) / M: accepted edges follow w exactly.

// Only the structured build (WF_STRUCTURED, compiled when a run has tables) carries this code:
// it costs the plain build's eRJS and eRVS paths registers even where it never runs.
#if defined(WF_STRUCTURED) && WF_NUM_TERMS > 0
#define WF_STRUCT_ON 1
#else
#define WF_STRUCT_ON 0
#endif
#define WF_TERM_SLOTS (WF_NUM_TERMS > 0 ? WF_NUM_TERMS : 1)
#define WF_MISSED 0xFFFFFFFFu

// One structured step: the masses and what the proposals need. Edges are offsets within
// their row (out of core a row's edges may be in mapped host memory); the tables are indexed
// from the row's first slot, `at` (its CSR offset, or table_at[cur] when only the longest
// rows have tables).
struct WfTerms {
    double mass[WF_TERM_SLOTS];
    double total;
    float bound[WF_TERM_SLOTS];
    u32 label;
    u64 at;                 // offsets[cur]
    u32 back_lo, back_hi;   // the edges back to prev in cur's row
    const u32* prev_row;    // prev's row's targets
    u32 prev_d;
};

__device__ __forceinline__ const u32* wf_term_entries(const WfGraph& g, int k) {
    return k == 0 ? g.term_entries0 : k == 1 ? g.term_entries1 : k == 2 ? g.term_entries2 : g.term_entries3;
}
__device__ __forceinline__ const double* wf_term_sums(const WfGraph& g, int k) {
    return k == 0 ? g.term_sums0 : k == 1 ? g.term_sums1 : k == 2 ? g.term_sums2 : g.term_sums3;
}

// The targets of the row whose first (virtual) edge is `base`, wherever they live.
__device__ __forceinline__ const u32* wf_row_targets(const WfGraph& g, u64 base) {
    return wf_cold(g, base) ? g.cold_targets + (base - g.hot_edges) : g.targets + base;
}

// The alias entry at `slot`: its kept edge offset or its alias, by the 32-bit word.
__device__ __forceinline__ u32 wf_alias_pick(const u32* entries, u64 slot, u32 word) {
    const u32* en = entries + 3 * slot;
    return word < en[0] ? en[1] : en[2];
}

// The step's masses M_k (ProposalTables::step): 1 if they were computed, 0 if a bound is not
// a finite number >= 0 (another sampler takes the step).
__device__ __forceinline__ int wf_terms_start(const WfGraph& g, const WfParams& p, const WfWalker& w, u64 base, u32 d, WfTerms& st) {
    if (d < g.table_min_degree) return 0;   // a row without tables
    st.total = 0.0;
    st.label = WF_HAS_LABEL_TERM ? wf_term_label(g, p, w) : 0u;
    st.at = g.table_at ? g.table_at[w.b.cur] : g.offsets[w.b.cur];
    st.back_lo = st.back_hi = 0;
    st.prev_row = g.targets; st.prev_d = 0;
    const u32 cur = w.b.cur, prev = w.b.prev;
    bool back_found = false;
    #pragma unroll
    for (int k = 0; k < WF_NUM_TERMS; ++k) {
        const float r = wf_term_bound(g, p, w, k);
        st.bound[k] = r;
        st.mass[k] = 0.0;
        if (!(r >= 0.0f) || r == __int_as_float(0x7f800000)) return 0;
        if (r == 0.0f) continue;
        const int f = wf_term_factor(k);
        double sum = 0.0;
        switch (wf_term_cond(k)) {
        case WF_COND_ALL:
            sum = f < 0 ? (double)d : wf_term_sums(g, k)[cur];
            break;
        case WF_COND_LABEL:
            if (st.label < g.seg_k) {
                if (f < 0) {
                    const u64 at = (u64)cur * (g.seg_k + 1) + st.label;
                    sum = (double)(g.seg_starts[at + 1] - g.seg_starts[at]);
                } else {
                    sum = wf_term_sums(g, k)[(u64)cur * g.seg_k + st.label];
                }
            }
            break;
        case WF_COND_BACK:
            if (prev < g.num_nodes) {
                if (!back_found) {
                    const u32* row = wf_row_targets(g, base);
                    st.back_lo = (u32)wf_lower_bound(row, 0, d, prev);
                    st.back_hi = (u32)wf_lower_bound(row, st.back_lo, d, prev + 1);
                    back_found = true;
                }
                if (f < 0) {
                    sum = (double)(st.back_hi - st.back_lo);
                } else {
                    // Few edges back: their factors are summed here; a bad one leaves the
                    // step to the other samplers, which report the weight.
                    for (u32 i = st.back_lo; i < st.back_hi; ++i) {
                        const float x = wf_term_static(g, p, f, base + i);
                        if (!(x >= 0.0f) || x == __int_as_float(0x7f800000)) return 0;
                        sum = __dadd_rn(sum, (double)x);
                    }
                }
            }
            break;
        default:  // WF_COND_PREV_NEIGHBOR
            if (prev < g.num_nodes) {
                st.prev_row = wf_row_targets(g, wf_row_base(g, prev));
                st.prev_d = (u32)(g.offsets[prev + 1] - g.offsets[prev]);
                sum = __dmul_rn((double)g.multiplicity, (double)st.prev_d);
            }
            break;
        }
        st.mass[k] = __dmul_rn((double)r, sum);
        st.total = __dadd_rn(st.total, st.mass[k]);
    }
    return 1;
}

// The first half of a trial (ProposalTables::draw): the candidate's offset in cur's row, or
// WF_MISSED (a neighbour of prev that cur lacks).
__device__ __forceinline__ u32 wf_terms_draw(const WfGraph& g, const WfParams& p, const WfWalker& w, u64 base, u32 d, const WfTerms& st, WfRng& rng, int& drawn) {
    int k = 0;
    if (WF_NUM_TERMS > 1) {
#ifdef WF_BROKEN_EQUAL_TERMS
        // Deliberately wrong (tests only): every term with mass is picked equally often.
        double live = 0.0;
        #pragma unroll
        for (int j = 0; j < WF_NUM_TERMS; ++j) live += st.mass[j] > 0.0 ? 1.0 : 0.0;
        WfTerms eq = st;
        #pragma unroll
        for (int j = 0; j < WF_NUM_TERMS; ++j) eq.mass[j] = st.mass[j] > 0.0 ? 1.0 / live : 0.0;
        eq.total = 1.0;
        double u = __dmul_rn(wf_uniform(rng), eq.total);
        const WfTerms& pick = eq;
#else
        double u = __dmul_rn(wf_uniform(rng), st.total);
        const WfTerms& pick = st;
#endif
        bool found = false;
        #pragma unroll
        for (int j = 0; j + 1 < WF_NUM_TERMS; ++j) {
            if (!found) {
                if (pick.mass[j] == 0.0 || u >= pick.mass[j]) { u = __dsub_rn(u, pick.mass[j]); k = j + 1; }
                else found = true;
            }
        }
        // Rounding may leave u past the last nonzero term: take the last one with mass.
        #pragma unroll
        for (int j = WF_NUM_TERMS - 1; j > 0; --j) if (k == j && pick.mass[j] == 0.0) k = j - 1;
    }
    drawn = k;
    u32 i = WF_MISSED;
    #pragma unroll
    for (int j = 0; j < WF_NUM_TERMS; ++j) {
        if (j != k) continue;
        const int f = wf_term_factor(j);
        const u32* entries = wf_term_entries(g, j);
        switch (wf_term_cond(j)) {
        case WF_COND_ALL: {
            const u32 slot = wf_below(rng, d);
            i = (f >= 0 && entries) ? wf_alias_pick(entries, st.at + slot, wf_next_u32(rng)) : slot;
            break;
        }
        case WF_COND_LABEL: {
            const u64 at = (u64)w.b.cur * (g.seg_k + 1) + st.label;
            const u32 lo = g.seg_starts[at], hi = g.seg_starts[at + 1];
            const u64 slot = st.at + lo + wf_below(rng, hi - lo);
            i = (f >= 0 && entries) ? wf_alias_pick(entries, slot, wf_next_u32(rng)) : g.seg_order[slot];
            break;
        }
        case WF_COND_BACK:
            if (f < 0) {
                i = st.back_lo + wf_below(rng, st.back_hi - st.back_lo);
            } else {
                // A linear scan: the edges back are few (one on a simple graph).
                double left = __ddiv_rn(__dmul_rn(wf_uniform(rng), st.mass[j]), (double)st.bound[j]);
                u32 last = st.back_lo;
                for (u32 x = st.back_lo; x < st.back_hi && i == WF_MISSED; ++x) {
                    const double fx = (double)wf_term_static(g, p, f, base + x);
                    if (fx > 0.0) {
                        last = x;
                        if (left < fx) i = x;
                        else left = __dsub_rn(left, fx);
                    }
                }
                if (i == WF_MISSED) i = last;
            }
            break;
        default: {  // WF_COND_PREV_NEIGHBOR
            const u32 x = st.prev_row[wf_below(rng, st.prev_d)];
            const u32* row = wf_row_targets(g, base);
            const u32 lo = (u32)wf_lower_bound(row, 0, d, x);
            if (lo < d && row[lo] == x) {
                const u32 m = (u32)wf_lower_bound(row, lo, d, x + 1) - lo;
                i = m == 1 ? lo : lo + wf_below(rng, m);
            }
            break;
        }
        }
    }
    return i;
}

// The envelope E(e) at edge e of cur's row (ProposalTables::envelope), widened by 2^-16.
// `drawn`: the term that proposed e (a simple graph's has_edge(prev, dst) holds for a
// candidate drawn through prev's row: no search).
__device__ __forceinline__ double wf_terms_envelope(const WfGraph& g, const WfParams& p, const WfWalker& w, const WfTerms& st, u64 base, u32 d, u64 e, int drawn) {
    double env = 0.0;
    #pragma unroll
    for (int k = 0; k < WF_NUM_TERMS; ++k) {
        if (st.mass[k] == 0.0) continue;
        double holds = 1.0;
        switch (wf_term_cond(k)) {
        case WF_COND_ALL: break;
        case WF_COND_LABEL: holds = wf_label(g, e) == st.label ? 1.0 : 0.0; break;
        case WF_COND_BACK: holds = wf_dst(g, e) == w.b.prev ? 1.0 : 0.0; break;
        default: {
            const u32 x = wf_dst(g, e);
            if (g.multiplicity == 1) {
                holds = (k == drawn || wf_has_edge(g, w.b.prev, x)) ? 1.0 : 0.0;
            } else {
                const u32 pa = (u32)wf_lower_bound(st.prev_row, 0, st.prev_d, x);
                const u32 pb = (u32)wf_lower_bound(st.prev_row, pa, st.prev_d, x + 1);
                const u32* row = wf_row_targets(g, base);
                const u32 ca = (u32)wf_lower_bound(row, 0, d, x);
                const u32 cb = (u32)wf_lower_bound(row, ca, d, x + 1);
                holds = __ddiv_rn(__dmul_rn((double)g.multiplicity, (double)(pb - pa)), (double)(cb > ca ? cb - ca : 1));
            }
            break;
        }
        }
        if (holds == 0.0) continue;
        const int f = wf_term_factor(k);
        const double fx = f < 0 ? 1.0 : (double)wf_term_static(g, p, f, e);
        env = __dadd_rn(env, __dmul_rn(__dmul_rn((double)st.bound[k], fx), holds));
    }
    return __dmul_rn(env, 1.0 + 1.0 / 65536.0);
}

// Cheap bounds lo <= E(e) <= hi (ProposalTables::envelope_range): every condition read from
// the edge but has_edge(prev, dst), which counts as false for lo and as K^2 for hi. With the
// weight's squeeze they decide most trials of a has_edge walk without a search, exactly as the
// full test would (E adds a subset of hi's terms and a superset of lo's, in the same order).
__device__ __forceinline__ void wf_terms_envelope_range(const WfGraph& g, const WfParams& p, const WfWalker& w, const WfTerms& st, u64 e, double* lo, double* hi) {
    double a = 0.0, b = 0.0;
    #pragma unroll
    for (int k = 0; k < WF_NUM_TERMS; ++k) {
        if (st.mass[k] == 0.0) continue;
        const int f = wf_term_factor(k);
        const double fx = f < 0 ? 1.0 : (double)wf_term_static(g, p, f, e);
        bool holds;
        switch (wf_term_cond(k)) {
        case WF_COND_ALL: holds = true; break;
        case WF_COND_LABEL: holds = wf_label(g, e) == st.label; break;
        case WF_COND_BACK: holds = wf_dst(g, e) == w.b.prev; break;
        default: {
            const double k2 = (double)g.multiplicity * (double)g.multiplicity;
            b = __dadd_rn(b, __dmul_rn(__dmul_rn((double)st.bound[k], fx), k2));
            continue;
        }
        }
        if (!holds) continue;
        const double c = __dmul_rn(__dmul_rn((double)st.bound[k], fx), 1.0);
        a = __dadd_rn(a, c);
        b = __dadd_rn(b, c);
    }
    *lo = __dmul_rn(a, 1.0 + 1.0 / 65536.0);
    *hi = __dmul_rn(b, 1.0 + 1.0 / 65536.0);
}

// A lane's walk words are gathered per 32-byte sector of the output (shared memory, slot k of
// lane L at k * 256 + L) and written as two 16-byte stores once the sector is full, or as the
// words held when the walk ends: one scattered 4-byte store a step had cost more than any load
// of the step (H100: weighted Node2Vec -22%, DeepWalk -24%, bench/results/
// 2026-12-05-gpu-output-sectors.md). The buffer takes 8 KiB of a block's 48 KiB of static
// shared memory; a structured build of three or four terms has no room for it and stores each
// word as it comes.
#if WF_STRUCT_ON
#define WF_TERMS_SMEM (sizeof(WfTerms) * 256)
#else
#define WF_TERMS_SMEM 0
#endif
constexpr bool WF_OUT_BUFFERED = WF_TERMS_SMEM + (u64)WF_NUM_STATS * 8 * 256 + 8 * 4 * 256 <= 48 * 1024;

// Word `at` of the output is v; `row_at` is the walk's first word, `last` flushes the sector.
__device__ __forceinline__ void wf_out_put(u32* buf, u32* out, u64 at, u32 v, u64 row_at, bool last) {
    if (!WF_OUT_BUFFERED) { out[at] = v; return; }
    const u32 slot = (u32)(((u64)(out + at) >> 2) & 7u);
    buf[slot * 256] = v;
    if (slot == 7u || last) {
        const u64 sector_at = at - slot;
        // The sector's first word of this walk: the sector's, or the row's when the row starts
        // inside it (the words before it are another walk's).
        const u64 first = sector_at < row_at ? row_at : sector_at;
        if (first == sector_at && slot == 7u) {
            uint4* sector = reinterpret_cast<uint4*>(out + sector_at);
            sector[0] = make_uint4(buf[0], buf[256], buf[512], buf[768]);
            sector[1] = make_uint4(buf[1024], buf[1280], buf[1536], buf[1792]);
        } else {
            for (u64 k = first; k <= at; ++k) out[k] = buf[(u32)(k - sector_at) * 256];
        }
    }
}

// Flushes the words held for the walk whose last word is `at`.
__device__ __forceinline__ void wf_out_flush(u32* buf, u32* out, u64 at, u64 row_at) {
    if (!WF_OUT_BUFFERED) return;
    wf_out_put(buf, out, at, buf[(u32)(((u64)(out + at) >> 2) & 7u) * 256], row_at, true);
}

// Words [from, to) of `out` are v: word stores up to a 16-byte boundary, then 16-byte stores.
// A walk that ends early (every walker on an isolated node ends at once) pads its whole row,
// and one word at a time held its warp's other lanes for up to `length` stores.
__device__ __forceinline__ void wf_pad(u32* out, u64 from, u64 to, u32 v) {
    u64 k = from;
    for (; k < to && (((u64)(out + k)) & 15u); ++k) out[k] = v;
    const uint4 v4 = make_uint4(v, v, v, v);
    for (; k + 4 <= to; k += 4) *reinterpret_cast<uint4*>(out + k) = v4;
    for (; k < to; ++k) out[k] = v;
}

// Blocks of 256 lanes that must fit on one multiprocessor at once: the register cap that sets
// (65536 / (256 * WF_MIN_BLOCKS)) trades spills for latency hiding (WAYFARER_MIN_BLOCKS sets it
// for a sweep).
#ifndef WF_MIN_BLOCKS
#define WF_MIN_BLOCKS 3
#endif

// The graph image and the batch's arguments are passed by value (__grid_constant__): their
// fields are read from the constant bank where they are used, and hold no registers across the
// loop (a copy in registers cost 11 registers and made the structured build spill).
extern "C" __global__ void __launch_bounds__(256, WF_MIN_BLOCKS) wf_walk(const __grid_constant__ WfGraph g, const WfParams* __restrict__ pp, const __grid_constant__ WfRunArgs a) {
    const WfParams& p = *pp;
    const int lane = threadIdx.x & 31;
    const u64 stride = (u64)a.length + 1;

    bool active = false, exhausted = false;
    u64 q = 0;          // batch-relative query (its global index, the streams' query, is WF_GLOBAL_QUERY)
    u32 len = 0;
    WfWalker w;
    // A step in progress: eRJS trials run one per loop iteration, so a lane whose step is
    // done moves on to its next step (or walker) while others still draw (warps stay busy
    // instead of waiting for the lane with the most trials).
    bool in_trials = false;
    // Where a step's Sample stream stands between loop iterations: the counter of its next
    // block and how many words of the block at hand were used (4: none left). The block
    // itself is computed again when the step's trials resume: held across the loop it cost
    // four registers, and at three blocks per multiprocessor every register counts.
    u32 rng_next = 0, rng_used = 4;
    float bound = 0.0f;
    u32 cap = 0, t = 0;
    u64 base = 0;
    u32 d = 0;
    // A structured step in progress (its trials run one per loop iteration, like eRJS's). Its
    // terms live in shared memory, a slot per lane: in registers they would stay live across
    // the loop and push the eRJS and eRVS paths into spills.
    bool in_struct = false;
#if WF_STRUCT_ON
    __shared__ WfTerms wf_lane_terms[256];
    WfTerms& st = wf_lane_terms[threadIdx.x];
#else
    WfTerms st;
#endif
    // The lane's counters, in shared memory: in registers they held 22 across the loop.
    __shared__ u64 wf_lane_stats[WF_NUM_STATS * 256];
    const WfLaneStats stats{wf_lane_stats + threadIdx.x};
    for (int i = 0; i < WF_NUM_STATS; ++i) stats[i] = 0;
    __shared__ u32 wf_out_buf[WF_OUT_BUFFERED ? 8 * 256 : 1];
    u32* const obuf = wf_out_buf + (WF_OUT_BUFFERED ? threadIdx.x : 0);

    while (true) {
        // Refill: idle lanes take the next queries, one atomic per warp (a counter that every
        // lane bumped alone serialized short walks: 5-step MetaPath makes a query per 5 steps).
        const bool wants = !active && !exhausted;
        const u32 wanting = __ballot_sync(WF_FULL, wants);
        if (wanting) {
            const int leader = __ffs(wanting) - 1;
            u64 first = 0;
            if (lane == leader) first = atomicAdd((unsigned long long*)a.counter, (unsigned long long)__popc(wanting));
            first = __shfl_sync(WF_FULL, first, leader);
            q = wants ? first + (u64)__popc(wanting & ((1u << lane) - 1u)) : q;
        }
        if (wants) {
            exhausted = q >= a.num_queries;
            if (!exhausted) {
                const u64 gq = WF_GLOBAL_QUERY(a, q);
                u32 start = a.per_node_starts ? (u32)(gq % (u64)g.num_nodes) : a.starts[q];
                w.b.start = start; w.b.cur = start; w.b.prev = WF_NO_NODE; w.b.step = 0; w.b.last_edge = ~0ull;
                w.b.cw = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
                memset(&w.s, 0, sizeof(w.s));
                WfRng ir = wf_rng(a.seed, gq, WF_INIT_STEP, WF_INIT);
                wf_init(g, p, w, ir);
                in_trials = false;
                active = a.length > 0;
                wf_out_put(obuf, a.out, q * stride, start, q * stride, !active);
                len = 1;
                if (!active) a.lens[q] = 1;
            }
        }
        if (!__any_sync(WF_FULL, active)) {
            // Lanes that found no query stay idle; once all have, the warp is done.
            if (__all_sync(WF_FULL, exhausted)) break;
            continue;
        }

        const u64 gq = WF_GLOBAL_QUERY(a, q);
        // The step's stream, where the last iteration left it (a new step starts it afresh).
        WfRng rng = wf_rng(a.seed, gq, w.b.step, WF_SAMPLE);
        if (in_trials) {
            rng.ctr.x = rng_next;
            rng.used = (int)rng_used;
            if (rng_used < 4) {
                WfU32x4 c = rng.ctr;
                c.x = rng_next - 1u;
                rng.buf = wf_philox(c, rng.k0, rng.k1);
            }
        }
        int picked = -1;        // index in the row, or -1
        bool need_ervs = false, dead = false;
        if (active && !in_trials) {
            // A new step: choose the sampler.
#ifdef WF_PF_SIG
            {   // 1: prev's, needed this step; 2: cur's, a step ahead (cur is the next step's prev)
                const u32 v = (WF_PF_SIG + 0) == 2 ? w.b.cur : w.b.prev;
                if (g.row_sig && v < g.num_nodes) wf_prefetch_l1(g.row_sig + (u64)v * WF_SIG_WORDS);
            }
#endif
            wf_enter(g, w.b);
#ifdef WF_OUT_OF_CORE
            base = wf_row_base(g, w.b.cur);
            d = (u32)(g.offsets[w.b.cur + 1] - g.offsets[w.b.cur]);
#else
            base = WF_LD_OFFSET(&g.offsets[w.b.cur]);
            d = (u32)(WF_LD_OFFSET(&g.offsets[w.b.cur + 1]) - base);
#endif
            if (d == 0) {
                dead = true;
            } else if (a.mode == 2) {
                need_ervs = true;
            } else {
                bool use_erjs = false;
                // The step's estimate, computed once: the adaptive rule's (both halves) and the
                // exact-sum dead-end test's; the forced samplers never read it otherwise.
                const float est = (a.mode == 0 || (WF_POSSIBLE_ZERO && WF_SUM_EXACT)) ? wf_estimate(g, p, w) : 0.0f;
                if (WF_POSSIBLE_ZERO && WF_SUM_EXACT && est <= 0.0f) {
                    dead = true;
                } else {
                    bound = wf_bound(g, p, w);
                    in_struct = false;
                    if (bound <= 0.0f) {
                        dead = true;
                    } else {
                        if (WF_STRUCT_ON && g.has_tables && (a.mode == 0 || a.mode == 3)) {
                            // The adaptive rule's structured half (the CPU engine's): against
                            // plain eRJS the weights' sum cancels, so only the masses are
                            // compared (c M <= d B), and against eRVS R c M / S <= d + F. Without
                            // a has_edge(prev, dst) term, where plain eRJS needs at most c trials
                            // the masses are not even computed.
                            const double plain_mass = bound < __int_as_float(0x7f800000) ? (double)d * (double)bound : __longlong_as_double(0x7ff0000000000000ll);
                            // An exact plan's term over a part of the row is always taken
                            // under adaptive too, as on the CPU (always_structured).
                            const bool always = a.mode == 3 || WF_ALWAYS_STRUCTURED;
                            if ((always || WF_HAS_PREV_NEIGHBOR_TERM || plain_mass > a.struct_cost * (double)est) && wf_terms_start(g, p, w, base, d, st)) {
                                if (!(st.total > 0.0)) {
                                    dead = true;   // every weight is at most its envelope, 0 here
                                } else {
                                    const double r = d <= a.short_row ? a.ratio_short : a.ratio;
                                    const double c = a.struct_cost * st.total;
                                    in_struct = always || (c <= plain_mass && r * c / (double)fmaxf(est, 1.17549435e-38f) <= (double)d + a.fixed);
                                }
                            }
                        }
                        if (!dead && !in_struct && bound < __int_as_float(0x7f800000))
                            use_erjs = a.mode == 1 || a.mode == 3 || !wf_prefers_reservoir(a, d, bound, est);
                    }
                }
                if (!dead && (use_erjs || in_struct)) {
                    in_trials = true;
                    cap = wf_trial_cap(a, d);
                    t = 0;
                } else if (!dead) {
                    need_ervs = true;
                }
            }
        }
        if (WF_STRUCT_ON && active && in_trials && in_struct) {
            // One structured trial, drawn from the step's Sample stream in the CPU's order.
            ++t;
            stats[WF_STAT_S_TRIALS] += 1;
            int drawn = 0;
            const u32 i = wf_terms_draw(g, p, w, base, d, st, rng, drawn);
            const u64 e = base + i;
            bool accept = false;
            if (i != WF_MISSED && WF_EXACT_PLAN && (!WF_HAS_PREV_NEIGHBOR_TERM || g.multiplicity == 1)) {
                // An exact plan's envelope is the weight: the candidate is taken untested, no
                // uniform drawn (ProposalTables::accepts_untested).
                accept = true;
            } else if (i != WF_MISSED) {
                const double u = wf_uniform(rng);
                const u32 x = wf_dst(g, e);   // read once for the squeeze and the weight
#ifdef WF_PF_NEXT
                if (x < g.num_nodes) wf_prefetch_l1(g.offsets + x);
#endif
                int verdict = -1;   // 1 accept, 0 reject, -1 undecided
                if (WF_HAS_ENVELOPE) {
                    // The squeeze first: most trials of a has_edge walk need no search.
                    float lo, hi;
                    wf_envelope(g, p, w, e, x, &lo, &hi);
                    double env_lo, env_hi;
                    wf_terms_envelope_range(g, p, w, st, e, &env_lo, &env_hi);
                    if (__dmul_rn(u, env_hi) < (double)lo && (double)lo <= env_hi) verdict = 1;
                    else if (__dmul_rn(u, env_lo) >= (double)hi) verdict = 0;
                }
                if (verdict < 0) {
                    const double env = wf_terms_envelope(g, p, w, st, base, d, e, drawn);
                    const float wx = wf_weight(g, p, w, e, x);
                    if (!(wx >= 0.0f) || wx == __int_as_float(0x7f800000)) { wf_report(a, WF_ERR_BAD_WEIGHT, gq, w.b.step, e, wx, 0.0f); dead = true; }
                    else if ((double)wx > env) { wf_report(a, WF_ERR_BOUND, gq, w.b.step, e, wx, (float)env); dead = true; }
                    else accept = __dmul_rn(u, env) < (double)wx;
                } else {
                    accept = verdict == 1;
                }
            }
            if (dead) {
                in_trials = false;
            } else if (accept) {
                picked = (int)i;
                in_trials = false;
                stats[WF_STAT_S_STEPS] += 1;
            } else if (t >= cap) {
                // Out of trials: eRVS finishes the step, exactly.
                in_trials = false;
                need_ervs = true;
                stats[WF_STAT_S_FALLBACKS] += 1;
            }
        } else if (active && in_trials) {
            // One eRJS trial, drawn from the step's Sample stream in the CPU's order.
            ++t;
            stats[WF_STAT_TRIALS] += 1;
            const u32 i = wf_below(rng, d);
            const double y = wf_uniform(rng) * (double)bound;
            const u32 x = wf_dst(g, base + i);   // read once for the squeeze and the weight
#ifdef WF_PF_NEXT
            if (x < g.num_nodes) wf_prefetch_l1(g.offsets + x);
#endif
            int verdict = -1;   // 1 accept, 0 reject, -1 undecided
            if (WF_HAS_ENVELOPE) {
                // The squeeze decides most trials without the expensive part, exactly as the
                // CPU's rejection_decide.
                float lo, hi;
                wf_envelope(g, p, w, base + i, x, &lo, &hi);
                if (y < (double)lo && lo <= bound) verdict = 1;
                else if (y >= (double)hi) verdict = 0;
            }
            if (verdict < 0) {
                const float wi = wf_weight(g, p, w, base + i, x);
                if (!(wi >= 0.0f) || wi == __int_as_float(0x7f800000)) { wf_report(a, WF_ERR_BAD_WEIGHT, gq, w.b.step, base + i, wi, 0.0f); dead = true; verdict = 0; }
                else if (wi > bound) { wf_report(a, WF_ERR_BOUND, gq, w.b.step, base + i, wi, bound); dead = true; verdict = 0; }
                else verdict = y < (double)wi ? 1 : 0;
            }
            if (dead) {
                in_trials = false;
            } else if (verdict == 1) {
                picked = (int)i;
                in_trials = false;
                stats[WF_STAT_ERJS] += 1;
            } else if (t >= cap) {
                // Out of trials: eRVS finishes the step, exactly.
                in_trials = false;
                need_ervs = true;
                stats[WF_STAT_FALLBACKS] += 1;
            }
        }

        rng_next = rng.ctr.x;
        rng_used = (u32)rng.used;

        // eRVS with jumps: the warp serves each lane that needs it. Lane L reads items L, L+32,
        // ... (one coalesced 8-byte load per lane per round) and runs A-ExpJ over its share:
        // its first positive item gets a key E/w; after that it draws only how much weight to
        // skip before the next item that beats its threshold (exponential with that rate) and
        // gives that item a key conditioned to beat it. The threshold is the lower of the
        // lane's own best key and the warp's best at the last sync: items whose key is above
        // either cannot win, so skipping them is exact. At a sync the remaining skip is
        // rescaled to the lower threshold (memorylessness: X ~ Exp(t) gives X t/t' ~ Exp(t')),
        // which costs no draw. A lane draws from its own counter-based stream, so the choice
        // depends only on (seed, query, step).
        u32 pending = __ballot_sync(WF_FULL, need_ervs);
        while (pending) {
            const int src = __ffs(pending) - 1;
            pending &= pending - 1;
            const WfWalker sw = wf_shfl(w, src);
            const u64 sbase = __shfl_sync(WF_FULL, base, src);
            const u32 sd = __shfl_sync(WF_FULL, d, src);
            const u64 sq = __shfl_sync(WF_FULL, gq, src);
            const double inf = __longlong_as_double(0x7ff0000000000000ll);
            WfRng lr = wf_rng(a.seed, sq, sw.b.step, WF_SAMPLE);
            lr.ctr.x = 0x80000000u | ((u32)lane << 24);   // disjoint from the step's eRJS draws
            double best = inf, thr = inf, skip = 0.0;
            bool have_skip = false;
            u32 best_i = 0xFFFFFFFFu, round = 0, next_sync = 1;
            for (u32 r0 = 0; r0 < sd; r0 += 32) {
                const u32 i = r0 + (u32)lane;
                if (i < sd) {
                    const float wi = wf_weight(g, p, sw, sbase + i, wf_dst(g, sbase + i));
                    if (!(wi >= 0.0f) || wi == __int_as_float(0x7f800000)) {
                        wf_report(a, WF_ERR_BAD_WEIGHT, sq, sw.b.step, sbase + i, wi, 0.0f);
                    } else if (wi > 0.0f) {
                        const double wd = (double)wi;
                        if (thr == inf) {
                            best = -log(wf_uniform(lr)) / wd;
                            best_i = i;
                            thr = best;
                        } else {
                            if (!have_skip) { skip = -log(wf_uniform(lr)) / thr; have_skip = true; }
                            skip -= wd;
                            if (skip <= 0.0) {
                                // E conditioned on E < thr * w: -log1p(-V (1 - e^{-thr w})), V ~ U(0,1).
                                const double c = -expm1(-thr * wd);
                                best = -log1p(-wf_uniform(lr) * c) / wd;
                                best_i = i;
                                thr = best;
                                have_skip = false;
                            }
                        }
                    }
                }
                if (++round == next_sync) {
                    next_sync = next_sync < 8 ? 2 * next_sync : next_sync + 8;
                    double m = best;
                    #pragma unroll
                    for (int off = 16; off > 0; off >>= 1) m = fmin(m, __shfl_xor_sync(WF_FULL, m, off));
                    if (m < thr) {
                        if (have_skip) skip *= thr / m;
                        thr = m;
                    }
                }
            }
            // Warp argmin; ties go to the smaller index.
            #pragma unroll
            for (int off = 16; off > 0; off >>= 1) {
                double ob = __shfl_xor_sync(WF_FULL, best, off);
                u32 oi = __shfl_xor_sync(WF_FULL, best_i, off);
                if (ob < best || (ob == best && oi < best_i)) { best = ob; best_i = oi; }
            }
            if (lane == src) {
                stats[WF_STAT_ERVS_EDGES] += sd;
                if (best_i == 0xFFFFFFFFu) dead = true;
                else { picked = (int)best_i; stats[WF_STAT_ERVS] += 1; }
            }
        }

        // Move, update, record, stop (lanes still in eRJS trials carry on next iteration).
        if (active && (picked >= 0 || dead)) {
            if (picked >= 0) {
                const u64 e = base + (u64)picked;
                w.b.prev = w.b.cur;
                w.b.cur = wf_dst(g, e);
                w.b.last_edge = e;
                w.b.step += 1;
                WfRng ur = wf_rng(a.seed, gq, w.b.step, WF_UPDATE);
                wf_update(g, p, w, ur);
                const bool ends = w.b.step >= a.length;
                // The walk's last word flushes its sector; a stop below flushes it too.
                wf_out_put(obuf, a.out, q * stride + len, w.b.cur, q * stride, ends);
                if (a.out_edges) a.out_edges[q * (stride - 1) + len - 1] = w.b.prev == WF_NO_NODE ? WF_NO_EDGE : w.b.last_edge;
                len += 1;
                stats[WF_STAT_STEPS] += 1;
                if (ends) {
                    active = false;
                } else if (wf_stop(g, p, w, ur)) {
                    stats[WF_STAT_STOPPED] += 1;
                    active = false;
                    wf_out_flush(obuf, a.out, q * stride + len - 1, q * stride);
                }
            } else {
                stats[WF_STAT_DEAD_ENDS] += 1;
                active = false;
                wf_out_flush(obuf, a.out, q * stride + len - 1, q * stride);
            }
            if (!active) {
                a.lens[q] = len;
                wf_pad(a.out, q * stride + len, q * stride + stride, WF_NO_NODE);
                if (a.out_edges) {
                    for (u64 k = len - 1; k + 1 < stride; ++k) a.out_edges[q * (stride - 1) + k] = WF_NO_EDGE;
                }
            }
        }
    }
    for (int i = 0; i < WF_NUM_STATS; ++i) {
        if (stats[i]) atomicAdd((unsigned long long*)&a.stats[i], (unsigned long long)stats[i]);
    }
}
