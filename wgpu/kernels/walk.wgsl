// wayfarer walk kernel for the wgpu backend (WGSL, parsed by naga).
//
// One invocation runs one walker at a time, all of its steps: the adaptive rule picks eRJS
// (uniform proposals, accept w/B, at most a trial cap, then eRVS) or eRVS (exponential-key
// reservoir sampling with jumps over the row, by this invocation alone) at every step.
//
// The functions marked HOOK are placeholders: the wgpu backend (wgpu/src/lower.rs) replaces
// their bodies with the walk's own functions, built as naga IR from wayfarer's IR, and adds
// the walk's state as private variables. Everything else here is fixed.
//
// Streams: (seed, query, step, purpose), the same Philox4x32-10 and counters as the CPU and
// CUDA. Decisions are made in f32 (the CPU and CUDA use f64 levels), so walks match the
// others in distribution, not walk for walk.

struct WfArgs {
    num_nodes: u32,
    num_queries: u32,
    first_query: u32,
    length: u32,
    seed_lo: u32,
    seed_hi: u32,
    mode: u32,            // 0 adaptive, 1 eRJS (eRVS as the trial-cap fallback), 2 eRVS
    per_node_starts: u32, // 1: start = query mod n; 0: starts[q]
    ratio: f32,
    fixed: f32,
    ratio_short: f32,
    short_row: u32,
    weighted: u32,        // 0: every weight is 1
    labelled: u32,        // 0: every label is 0
    label_k: u32,         // labels with per-node arrays (0: whole-row aggregates instead)
    nf_wmin: u32,         // offsets into node_f32 / node_u32
    nf_wsum: u32,
    nf_label_max: u32,
    nf_label_sum: u32,
    nf_props: u32,
    nu_nbr_min: u32,
    nu_label_count: u32,
    shared_row: u32,      // the workgroup kernel: eRVS over rows this long or longer is shared
    pad1: u32,
}

@group(0) @binding(0) var<storage, read> offsets: array<u32>;
@group(0) @binding(1) var<storage, read> targets: array<u32>;
@group(0) @binding(2) var<storage, read> weights: array<f32>;
@group(0) @binding(3) var<storage, read> labels: array<u32>;
// Timestamps as three f32 per edge whose f64 sum is the CPU's `t as f64` exactly (24 bits
// each cover the 53 of an f64): WGSL has no 64-bit loads.
@group(0) @binding(4) var<storage, read> times: array<f32>;
// Per-node float arrays: weight max [0, n), min, sum, per-label max and sum, properties.
@group(0) @binding(5) var<storage, read> node_f32: array<f32>;
// Per-node integer arrays: neighbor degree max [0, n), min, per-label counts.
@group(0) @binding(6) var<storage, read> node_u32: array<u32>;
// Hyperparameters, one 32-bit word each (f64 values as three f32 words, like times).
@group(0) @binding(7) var<storage, read> params: array<u32>;
@group(0) @binding(8) var<uniform> args: WfArgs;
@group(0) @binding(9) var<storage, read> starts: array<u32>;
// num_queries x (length + 1) nodes, NO_NODE padded, then num_queries lengths.
@group(0) @binding(10) var<storage, read_write> out: array<u32>;
// [0, 8): the error (code, query, step, edge, weight bits, bound bits); then 64 slots of WF_NUM_STATS
// counters (workgroups add into slot id mod 64, so no counter nears 2^32 in a batch).
@group(0) @binding(11) var<storage, read_write> counters: array<atomic<u32>>;

const NO_NODE: u32 = 0xFFFFFFFFu;
const INIT_STEP: u32 = 0xFFFFFFFFu;
const PURPOSE_SAMPLE: u32 = 0u;
const PURPOSE_UPDATE: u32 = 1u;
const PURPOSE_INIT: u32 = 2u;
const WG: u32 = 64u;
const NUM_STATS: u32 = 8u;
const STAT_ERJS: u32 = 0u;
const STAT_ERVS: u32 = 1u;
const STAT_TRIALS: u32 = 2u;
const STAT_FALLBACKS: u32 = 3u;
const STAT_DEAD_ENDS: u32 = 4u;
const STAT_STOPPED: u32 = 5u;
const STAT_STEPS: u32 = 6u;
const STAT_ERVS_EDGES: u32 = 7u;
const ERR_BAD_WEIGHT: u32 = 1u;
const ERR_BOUND: u32 = 2u;
// A walk loop ended without its walker finishing: the driver cut the loop (llvmpipe stops
// every loop of an invocation after 65,535 iterations in all, silently).
const ERR_CUT: u32 = 3u;

// ---- Philox4x32-10 -------------------------------------------------------------------------

struct Rng {
    key: vec2<u32>,
    ctr: vec4<u32>,
    buf: vec4<u32>,
    used: u32,
}

// The high 32 bits of a 32 x 32-bit product (WGSL has no 64-bit integers).
fn wf_mulhi(a: u32, b: u32) -> u32 {
    let a_lo = a & 0xFFFFu;
    let a_hi = a >> 16u;
    let b_lo = b & 0xFFFFu;
    let b_hi = b >> 16u;
    let ll = a_lo * b_lo;
    let lh = a_lo * b_hi;
    let hl = a_hi * b_lo;
    let hh = a_hi * b_hi;
    let mid = (ll >> 16u) + (lh & 0xFFFFu) + (hl & 0xFFFFu);
    return hh + (lh >> 16u) + (hl >> 16u) + (mid >> 16u);
}

fn wf_philox(c0: vec4<u32>, key: vec2<u32>) -> vec4<u32> {
    var c = c0;
    var k = key;
    for (var r = 0u; r < 10u; r++) {
        if (r > 0u) {
            k = k + vec2<u32>(0x9E3779B9u, 0xBB67AE85u);
        }
        let hi0 = wf_mulhi(0xD2511F53u, c.x);
        let lo0 = 0xD2511F53u * c.x;
        let hi1 = wf_mulhi(0xCD9E8D57u, c.z);
        let lo1 = 0xCD9E8D57u * c.z;
        c = vec4<u32>(hi1 ^ c.y ^ k.x, lo1, hi0 ^ c.w ^ k.y, lo0);
    }
    return c;
}

fn wf_rng(query: u32, step: u32, purpose: u32) -> Rng {
    var r: Rng;
    r.key = vec2<u32>(args.seed_lo, args.seed_hi);
    r.ctr = vec4<u32>(0u, step, query, purpose << 24u);
    r.buf = vec4<u32>(0u);
    r.used = 4u;
    return r;
}

fn wf_next(r: ptr<function, Rng>) -> u32 {
    if ((*r).used == 4u) {
        (*r).buf = wf_philox((*r).ctr, (*r).key);
        (*r).ctr.x = (*r).ctr.x + 1u;
        (*r).used = 0u;
    }
    let v = (*r).buf[(*r).used];
    (*r).used = (*r).used + 1u;
    return v;
}

// A uniform f32 in the open interval (0, 1) from the top 24 bits of a draw.
fn wf_unit(x: u32) -> f32 {
    return (f32(x >> 8u) + 0.5) * (1.0 / 16777216.0);
}

// Lemire's unbiased bounded draw, as StepRng::below (32-bit path).
fn wf_below(r: ptr<function, Rng>, n: u32) -> u32 {
    var x = wf_next(r);
    var lo = x * n;
    if (lo < n) {
        let threshold = (0u - n) % n;
        while (lo < threshold) {
            x = wf_next(r);
            lo = x * n;
        }
    }
    return wf_mulhi(x, n);
}

// The hooks' stream (init, update and stop draw from it); a private variable so that the
// generated functions need no arguments.
var<private> wf_hook_rng: Rng;

fn wf_hook_u32() -> u32 {
    var r = wf_hook_rng;
    let v = wf_next(&r);
    wf_hook_rng = r;
    return v;
}

// ---- The walker, as the generated functions see it ----------------------------------------

var<private> wf_cur: u32;
var<private> wf_prev: u32;
var<private> wf_start: u32;
var<private> wf_step: u32;
var<private> wf_edge: u32;   // the edge of the last move (update reads it)

// ---- Graph queries (non-nodes give 0 / false, as on the CPU) -------------------------------

fn wf_degree(v: u32) -> u32 {
    if (v >= args.num_nodes) {
        return 0u;
    }
    return offsets[v + 1u] - offsets[v];
}

fn wf_dst(e: u32) -> u32 {
    return targets[e];
}

fn wf_h(e: u32) -> f32 {
    if (args.weighted == 0u) {
        return 1.0;
    }
    return weights[e];
}

fn wf_label(e: u32) -> u32 {
    if (args.labelled == 0u) {
        return 0u;
    }
    return labels[e];
}

fn wf_time_part(e: u32, k: u32) -> f32 {
    return times[3u * e + k];
}

fn wf_lower_bound(lo0: u32, hi0: u32, v: u32) -> u32 {
    var lo = lo0;
    var hi = hi0;
    while (lo < hi) {
        let mid = lo + ((hi - lo) >> 1u);
        if (targets[mid] < v) {
            lo = mid + 1u;
        } else {
            hi = mid;
        }
    }
    return lo;
}

fn wf_find_edge(u: u32, v: u32) -> u32 {
    if (u >= args.num_nodes || v >= args.num_nodes) {
        return NO_NODE;
    }
    let end = offsets[u + 1u];
    let lo = wf_lower_bound(offsets[u], end, v);
    if (lo < end && targets[lo] == v) {
        return lo;
    }
    return NO_NODE;
}

fn wf_has_edge(u: u32, v: u32) -> bool {
    return wf_find_edge(u, v) != NO_NODE;
}

fn wf_prop(p: u32, v: u32) -> f32 {
    if (v >= args.num_nodes) {
        return 0.0;
    }
    return node_f32[args.nf_props + p * args.num_nodes + v];
}

fn wf_wmax(v: u32) -> f32 {
    return node_f32[v];
}

fn wf_wmin(v: u32) -> f32 {
    return node_f32[args.nf_wmin + v];
}

fn wf_wsum(v: u32) -> f32 {
    return node_f32[args.nf_wsum + v];
}

fn wf_nbr_degree_max(v: u32) -> u32 {
    return node_u32[v];
}

fn wf_nbr_degree_min(v: u32) -> u32 {
    return node_u32[args.nu_nbr_min + v];
}

// Largest weight and number of the edges cur -> prev.
fn wf_back(cur: u32, prev: u32) -> vec2<f32> {
    var w = 0.0;
    var n = 0u;
    var e = wf_find_edge(cur, prev);
    if (e != NO_NODE) {
        let end = offsets[cur + 1u];
        while (e < end && targets[e] == prev) {
            w = max(w, wf_h(e));
            n = n + 1u;
            e = e + 1u;
        }
    }
    return vec2<f32>(w, f32(n));
}

fn wf_back_weight(cur: u32, prev: u32) -> f32 {
    return wf_back(cur, prev).x;
}

fn wf_back_count(cur: u32, prev: u32) -> u32 {
    return u32(wf_back(cur, prev).y);
}

fn wf_label_max(cur: u32, l: u32) -> f32 {
    if (args.label_k == 0u) {
        return wf_wmax(cur);
    }
    if (l >= args.label_k) {
        return 0.0;
    }
    return node_f32[args.nf_label_max + cur * args.label_k + l];
}

fn wf_label_sum(cur: u32, l: u32) -> f32 {
    if (args.label_k == 0u) {
        return wf_wsum(cur);
    }
    if (l >= args.label_k) {
        return 0.0;
    }
    return node_f32[args.nf_label_sum + cur * args.label_k + l];
}

fn wf_label_count(cur: u32, l: u32) -> u32 {
    if (args.label_k == 0u) {
        return wf_degree(cur);
    }
    if (l >= args.label_k) {
        return 0u;
    }
    return node_u32[args.nu_label_count + cur * args.label_k + l];
}

fn wf_param(i: u32) -> u32 {
    return params[i];
}

// ---- HOOKS: bodies generated from the walk ------------------------------------------------

// HOOK: bit 0 possible zero weights, bit 1 the sum estimate is exact.
fn wf_flags() -> u32 {
    return 0u;
}

// HOOK: the weight of edge e for the current walker.
fn wf_weight(e: u32) -> f32 {
    return 1.0;
}

// HOOK: B, an upper bound of every weight of this step (infinite: none, eRVS only).
fn wf_bound() -> f32 {
    return 1.0;
}

// HOOK: an estimate of the sum of this step's weights (the cost model's).
fn wf_estimate() -> f32 {
    return 1.0;
}

// HOOK: sets the walker's state to zero.
fn wf_reset_state() {
}

// HOOK: init (state from the walker's start).
fn wf_init() {
}

// HOOK: update (after a move along wf_edge).
fn wf_update() {
}

// HOOK: stop.
fn wf_stop() -> bool {
    return false;
}

// ---- The kernel ---------------------------------------------------------------------------

fn wf_bad(w: f32) -> bool {
    // Negative, NaN or infinite (by bits: no reliance on NaN comparisons).
    let b = bitcast<u32>(w);
    return (b & 0x7F800000u) == 0x7F800000u || (w < 0.0);
}

fn wf_report(code: u32, q: u32, step: u32, e: u32, w: f32, bound: f32) {
    let r = atomicCompareExchangeWeak(&counters[0], 0u, code);
    if (r.exchanged) {
        atomicStore(&counters[1], q);
        atomicStore(&counters[2], step);
        atomicStore(&counters[3], e);
        atomicStore(&counters[4], bitcast<u32>(w));
        atomicStore(&counters[5], bitcast<u32>(bound));
    }
}

fn wf_prefers_reservoir(d: u32, bound: f32, estimate: f32) -> bool {
    let r = select(args.ratio, args.ratio_short, d <= args.short_row);
    return r * f32(d) * bound > estimate * (f32(d) + args.fixed);
}

fn wf_trial_cap(d: u32) -> u32 {
    let r = select(args.ratio, args.ratio_short, d <= args.short_row);
    let c = 2.0 * (f32(d) + args.fixed) / max(r, 1e-3);
    return u32(min(max(c, 32.0), 1e9));
}

// 1 - e^{-x} for x >= 0, accurate for small x.
fn wf_one_minus_exp_neg(x: f32) -> f32 {
    if (x < 1e-3) {
        return x * (1.0 - 0.5 * x * (1.0 - x / 3.0));
    }
    return 1.0 - exp(-x);
}

// -ln(1 - y) for y in [0, 1), accurate for small y.
fn wf_neg_log1m(y: f32) -> f32 {
    if (y < 1e-3) {
        return y * (1.0 + y * (0.5 + y / 3.0));
    }
    return -log(1.0 - y);
}

var<workgroup> wf_group_stats: array<atomic<u32>, 8>;

// Adds an invocation's counters into its workgroup's, then one invocation adds those into the
// run's: a global atomic per workgroup and counter instead of per invocation (with a million
// walkers, the per-invocation atomics on a few hundred words were most of a short walk's time).
// Called once, at the end of the kernel, in uniform control flow.
fn wf_flush_stats(stats: array<u32, 8>, local: u32, group: u32) {
    for (var k = 0u; k < NUM_STATS; k++) {
        if (stats[k] != 0u) {
            atomicAdd(&wf_group_stats[k], stats[k]);
        }
    }
    workgroupBarrier();
    if (local == 0u) {
        let slot = 8u + (group % 64u) * NUM_STATS;
        for (var k = 0u; k < NUM_STATS; k++) {
            let v = atomicLoad(&wf_group_stats[k]);
            if (v != 0u) {
                atomicAdd(&counters[slot + k], v);
            }
        }
    }
}

// The sampler's decision for a walker's step from row [base, base + d): an edge picked by
// eRJS, a dead end (empty row, no positive weight, or an error reported), or a need for eRVS
// (chosen by the cost model or mode, or eRJS reached its trial cap). Shared by the kernels;
// the eRVS itself is each kernel's own.
struct Choice {
    picked: u32,
    dead: bool,
    need_ervs: bool,
}

fn wf_choose(gq: u32, base: u32, d: u32, stats: ptr<function, array<u32, 8>>) -> Choice {
    var c = Choice(NO_NODE, d == 0u, false);
    if (c.dead) {
        return c;
    }
    if (args.mode == 2u) {
        c.need_ervs = true;
        return c;
    }
    let estimate = wf_estimate();
    if ((wf_flags() & 3u) == 3u && estimate <= 0.0) {
        c.dead = true;
        return c;
    }
    let bound = wf_bound();
    if (!(bound > 0.0)) {
        c.dead = true;
        return c;
    }
    // An infinite bound (or mode 0 preferring the reservoir) goes to eRVS.
    if ((bitcast<u32>(bound) & 0x7F800000u) == 0x7F800000u
        || (args.mode != 1u && wf_prefers_reservoir(d, bound, estimate))) {
        c.need_ervs = true;
        return c;
    }
    var rng = wf_rng(gq, wf_step, PURPOSE_SAMPLE);
    let cap = wf_trial_cap(d);
    var t = 0u;
    loop {
        t = t + 1u;
        (*stats)[STAT_TRIALS] += 1u;
        let i = wf_below(&rng, d);
        let y = wf_unit(wf_next(&rng)) * bound;
        let wi = wf_weight(base + i);
        if (wf_bad(wi)) {
            wf_report(ERR_BAD_WEIGHT, gq, wf_step, base + i, wi, 0.0);
            c.dead = true;
            return c;
        }
        if (wi > bound) {
            wf_report(ERR_BOUND, gq, wf_step, base + i, wi, bound);
            c.dead = true;
            return c;
        }
        if (y < wi) {
            c.picked = i;
            (*stats)[STAT_ERJS] += 1u;
            return c;
        }
        if (t >= cap) {
            c.need_ervs = true;
            (*stats)[STAT_FALLBACKS] += 1u;
            return c;
        }
    }
    return c;
}

// Ends query q's row of the output: its length, NO_NODE after the last node.
fn wf_finish(q: u32, len: u32) {
    let stride = args.length + 1u;
    out[args.num_queries * stride + q] = len;
    for (var k = len; k < stride; k++) {
        out[q * stride + k] = NO_NODE;
    }
}

// A lockstep kernel's invocation (the subgroup and workgroup kernels): its walker, if any,
// and where its next query is.
struct Lane {
    next_q: u32,
    q: u32,
    gq: u32,
    len: u32,
    walking: bool,
    done: bool,   // no query left
}

// Gives the lane its next query if it has no walker (done when none is left).
fn wf_lane_refill(l: ptr<function, Lane>, total: u32) {
    if ((*l).walking || (*l).done) {
        return;
    }
    (*l).q = (*l).next_q;
    (*l).next_q = (*l).next_q + total;
    if ((*l).q >= args.num_queries) {
        (*l).done = true;
        return;
    }
    (*l).gq = args.first_query + (*l).q;
    wf_begin((*l).q, (*l).gq);
    (*l).len = 1u;
    (*l).walking = args.length > 0u;
    if (!(*l).walking) {
        wf_finish((*l).q, 1u);
    }
}

// Ends the lane's step: the move along edge base + picked (picked NO_NODE: a dead end), then
// the walk's end if it is one.
fn wf_lane_step(l: ptr<function, Lane>, base: u32, picked: u32, stats: ptr<function, array<u32, 8>>) {
    if (!(*l).walking) {
        return;
    }
    if (picked == NO_NODE) {
        (*stats)[STAT_DEAD_ENDS] += 1u;
        (*l).walking = false;
    } else {
        wf_advance((*l).q, (*l).gq, base + picked, (*l).len);
        (*l).len = (*l).len + 1u;
        (*stats)[STAT_STEPS] += 1u;
        if (wf_step >= args.length) {
            (*l).walking = false;
        } else if (wf_stop()) {
            (*stats)[STAT_STOPPED] += 1u;
            (*l).walking = false;
        }
    }
    if (!(*l).walking) {
        wf_finish((*l).q, (*l).len);
    }
}

// After a lockstep kernel's loop: a lane still walking or with queries left was cut.
fn wf_lane_check(l: Lane) {
    if (l.walking || !l.done) {
        wf_report(ERR_CUT, l.gq, wf_step, 0u, 0.0, 0.0);
    }
}

struct Pick {
    index: u32,   // in the row; NO_NODE: no positive weight
    bad: u32,     // 1: a bad weight was reported
}

// eRVS with jumps (A-ExpJ): the first positive item gets key E/w; then only the weight to
// skip before the next item that beats the threshold is drawn (exponential with the
// threshold as rate), and that item gets a key conditioned to beat it. One pass's state; the
// shared kernels lower `thr` to the best key of the whole group now and then (an item whose
// key cannot beat it is skipped, which is exact), rescaling the remaining skip.
struct Expj {
    thr: f32,       // the threshold: infinite until the first positive item
    best: f32,      // this pass's smallest key
    best_i: u32,    // its item; NO_NODE: none yet
    skip: f32,
    have_skip: bool,
}

fn wf_expj_new() -> Expj {
    let inf = bitcast<f32>(0x7F800000u);
    return Expj(inf, inf, NO_NODE, 0.0, false);
}

// Offers item i of weight wi > 0 to the pass.
fn wf_expj_offer(x: ptr<function, Expj>, rng: ptr<function, Rng>, i: u32, wi: f32) {
    if ((*x).best_i == NO_NODE && (bitcast<u32>((*x).thr) & 0x7F800000u) == 0x7F800000u) {
        (*x).best = -log(wf_unit(wf_next(rng))) / wi;
        (*x).best_i = i;
        (*x).thr = (*x).best;
        return;
    }
    if (!(*x).have_skip) {
        (*x).skip = -log(wf_unit(wf_next(rng))) / (*x).thr;
        (*x).have_skip = true;
    }
    (*x).skip = (*x).skip - wi;
    if ((*x).skip <= 0.0) {
        let c = wf_one_minus_exp_neg((*x).thr * wi);
        (*x).best = wf_neg_log1m(wf_unit(wf_next(rng)) * c) / wi;
        (*x).best_i = i;
        (*x).thr = (*x).best;
        (*x).have_skip = false;
    }
}

// Lowers the pass's threshold to m (the group's best key) if that is lower.
fn wf_expj_lower(x: ptr<function, Expj>, m: f32) {
    if (m < (*x).thr) {
        // Memorylessness: the remaining skip rescaled to the lower threshold.
        if ((*x).have_skip) {
            (*x).skip = (*x).skip * ((*x).thr / m);
        }
        (*x).thr = m;
    }
}

// eRVS of the whole row by this invocation alone.
fn wf_reservoir(q: u32, base: u32, d: u32) -> Pick {
    var rng = wf_rng(q, wf_step, PURPOSE_SAMPLE);
    rng.ctr.x = 0x80000000u;   // disjoint from the step's eRJS draws
    var x = wf_expj_new();
    for (var i = 0u; i < d; i++) {
        let wi = wf_weight(base + i);
        if (wf_bad(wi)) {
            wf_report(ERR_BAD_WEIGHT, q, wf_step, base + i, wi, 0.0);
            return Pick(NO_NODE, 1u);
        }
        if (wi > 0.0) {
            wf_expj_offer(&x, &rng, i, wi);
        }
    }
    return Pick(x.best_i, 0u);
}

// Starts query q (global gq) at its start node: position, state, init, the walk's first node.
fn wf_begin(q: u32, gq: u32) {
    var start = 0u;
    if (args.per_node_starts != 0u) {
        start = gq % args.num_nodes;
    } else {
        start = starts[q];
    }
    wf_start = start;
    wf_cur = start;
    wf_prev = NO_NODE;
    wf_step = 0u;
    wf_edge = 0u;
    wf_reset_state();
    wf_hook_rng = wf_rng(gq, INIT_STEP, PURPOSE_INIT);
    wf_init();
    out[q * (args.length + 1u)] = start;
}

// Moves query q's walker along edge e (its len-th node): position, update, the node out.
fn wf_advance(q: u32, gq: u32, e: u32, len: u32) {
    wf_prev = wf_cur;
    wf_cur = targets[e];
    wf_edge = e;
    wf_step = wf_step + 1u;
    wf_hook_rng = wf_rng(gq, wf_step, PURPOSE_UPDATE);
    wf_update();
    out[q * (args.length + 1u) + len] = wf_cur;
}

@compute @workgroup_size(64)
fn wf_walk(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) local: u32,
    @builtin(workgroup_id) group: vec3<u32>,
) {
    let total = nwg.x * WG;
    var stats = array<u32, 8>();
    for (var q = gid.x; q < args.num_queries; q += total) {
        let gq = args.first_query + q;
        wf_begin(q, gq);
        var len = 1u;
        var ended = false;
        while (wf_step < args.length) {
            let cur = wf_cur;
            let base = offsets[cur];
            let d = offsets[cur + 1u] - base;
            let c = wf_choose(gq, base, d, &stats);
            var picked = c.picked;
            var dead = c.dead;
            if (c.need_ervs) {
                let p = wf_reservoir(gq, base, d);
                stats[STAT_ERVS_EDGES] += d;
                if (p.bad != 0u || p.index == NO_NODE) {
                    dead = true;
                } else {
                    picked = p.index;
                    stats[STAT_ERVS] += 1u;
                }
            }
            if (dead || picked == NO_NODE) {
                stats[STAT_DEAD_ENDS] += 1u;
                ended = true;
                break;
            }
            wf_advance(q, gq, base + picked, len);
            len = len + 1u;
            stats[STAT_STEPS] += 1u;
            if (wf_step < args.length && wf_stop()) {
                stats[STAT_STOPPED] += 1u;
                ended = true;
                break;
            }
        }
        if (!ended && wf_step < args.length) {
            wf_report(ERR_CUT, gq, wf_step, 0u, 0.0, 0.0);
        }
        wf_finish(q, len);
    }
    wf_flush_stats(stats, local, group.x);
}
