// wayfarer walk kernel, workgroup variant: appended to walk.wgsl for adapters without
// subgroup operations, and for walks whose state the subgroup kernel cannot shuffle (f64,
// bool).
//
// The walk loop runs in lockstep across the workgroup (it ends when a uniform load finds no
// walker left), each invocation with its own walker; eRJS steps are the invocation's own, as
// in wf_walk. An eRVS step over a short row is the invocation's own too (wf_reservoir); one
// over a row of args.shared_row edges or more is served by the whole workgroup: the walker
// publishes itself (position, row, state) in workgroup memory, the walkers that need it are
// served in turn, every invocation taking items lane, lane + WG, ... (coalesced) and running
// A-ExpJ over its share with its own stream; the smallest key wins (ties: the smaller index).
// The winner is found by the served walker's invocation from the keys in workgroup memory, so
// no atomics and no reset: two barriers per served walker.

// HOOK: copies the walker's state into the saved copies.
fn wf_state_save() {
}

// HOOK: the saved copies back into the walker's state.
fn wf_state_restore() {
}

// HOOK: the walker's state into slot `slot` of the workgroup's state arrays.
fn wf_state_publish(slot: u32) {
}

// HOOK: the state published in slot `src` into this invocation's.
fn wf_state_adopt(src: u32) {
}

// The walkers published for a shared eRVS step: position, row, stream.
var<workgroup> wf_wg_cur: array<u32, 64>;
var<workgroup> wf_wg_prev: array<u32, 64>;
var<workgroup> wf_wg_start: array<u32, 64>;
var<workgroup> wf_wg_step: array<u32, 64>;
var<workgroup> wf_wg_edge: array<u32, 64>;
var<workgroup> wf_wg_gq: array<u32, 64>;
var<workgroup> wf_wg_base: array<u32, 64>;
var<workgroup> wf_wg_d: array<u32, 64>;
// Each invocation's best key and its index for the walker being served.
var<workgroup> wf_wg_key: array<f32, 64>;
var<workgroup> wf_wg_idx: array<u32, 64>;
// Per round: which invocations need a shared eRVS step (bit per invocation), how many still
// walk. Written by atomics, then copied by invocation 0 for a uniform load.
var<workgroup> wf_wg_need_bits: array<atomic<u32>, 2>;
var<workgroup> wf_wg_alive_count: atomic<u32>;
var<workgroup> wf_wg_round: vec3<u32>;

struct SharePick {
    index: u32,   // in the row; NO_NODE: no positive weight in this invocation's share
    key: f32,
    bad: u32,     // 1: a bad weight was reported
}

// eRVS of the walker published in slot `src`, by the whole workgroup: returns this
// invocation's best key and index over its share of the row. Every invocation calls it with
// the same `src`.
fn wf_reservoir_share(src: u32, local: u32) -> SharePick {
    let gq = wf_wg_gq[src];
    let base = wf_wg_base[src];
    let d = wf_wg_d[src];
    // This invocation evaluates the weights as walker `src`.
    let own = vec4<u32>(wf_cur, wf_prev, wf_start, wf_step);
    let own_edge = wf_edge;
    wf_state_save();
    wf_cur = wf_wg_cur[src];
    wf_prev = wf_wg_prev[src];
    wf_start = wf_wg_start[src];
    wf_step = wf_wg_step[src];
    wf_edge = wf_wg_edge[src];
    wf_state_adopt(src);

    var rng = wf_rng(gq, wf_step, PURPOSE_SAMPLE);
    rng.ctr.x = 0x80000000u | ((local + 1u) << 24u);   // per lane, disjoint from eRJS and wf_reservoir
    var x = wf_expj_new();
    var bad = 0u;
    for (var i = local; i < d; i += WG) {
        let wi = wf_weight(base + i);
        if (wf_bad(wi)) {
            wf_report(ERR_BAD_WEIGHT, gq, wf_step, base + i, wi, 0.0);
            bad = 1u;
        } else if (wi > 0.0) {
            wf_expj_offer(&x, &rng, i, wi);
        }
    }

    wf_cur = own.x;
    wf_prev = own.y;
    wf_start = own.z;
    wf_step = own.w;
    wf_edge = own_edge;
    wf_state_restore();
    return SharePick(x.best_i, x.best, bad);
}

@compute @workgroup_size(64)
fn wf_walk_workgroup(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) local: u32,
    @builtin(workgroup_id) group: vec3<u32>,
) {
    var stats = array<u32, 8>();
    var me = Lane(gid.x, 0u, 0u, 0u, false, false);
    loop {
        wf_lane_refill(&me, nwg.x * WG);
        var picked = NO_NODE;
        var base = 0u;
        var d = 0u;
        if (me.walking) {
            base = offsets[wf_cur];
            d = offsets[wf_cur + 1u] - base;
            let c = wf_choose(me.gq, base, d, &stats);
            picked = c.picked;
            if (c.need_ervs && d < args.shared_row) {
                let p = wf_reservoir(me.gq, base, d);
                stats[STAT_ERVS_EDGES] += d;
                if (p.bad == 0u && p.index != NO_NODE) {
                    picked = p.index;
                    stats[STAT_ERVS] += 1u;
                }
            } else if (c.need_ervs) {
                wf_wg_cur[local] = wf_cur;
                wf_wg_prev[local] = wf_prev;
                wf_wg_start[local] = wf_start;
                wf_wg_step[local] = wf_step;
                wf_wg_edge[local] = wf_edge;
                wf_wg_gq[local] = me.gq;
                wf_wg_base[local] = base;
                wf_wg_d[local] = d;
                wf_state_publish(local);
                atomicOr(&wf_wg_need_bits[local / 32u], 1u << (local % 32u));
            }
        }
        if (!me.done) {
            atomicAdd(&wf_wg_alive_count, 1u);
        }
        workgroupBarrier();
        if (local == 0u) {
            wf_wg_round = vec3<u32>(
                atomicExchange(&wf_wg_need_bits[0], 0u),
                atomicExchange(&wf_wg_need_bits[1], 0u),
                atomicExchange(&wf_wg_alive_count, 0u),
            );
        }
        let round = workgroupUniformLoad(&wf_wg_round);
        if (round.z == 0u) {
            break;
        }
        // Shared eRVS steps, one walker at a time.
        for (var word = 0u; word < 2u; word++) {
            var pending = round[word];
            while (pending != 0u) {
                let src = word * 32u + firstTrailingBit(pending);
                pending = pending & (pending - 1u);
                let p = wf_reservoir_share(src, local);
                // A bad weight seen by any invocation is key -1 (keys are never negative).
                wf_wg_key[local] = select(p.key, -1.0, p.bad != 0u);
                wf_wg_idx[local] = p.index;
                workgroupBarrier();
                if (local == src) {
                    var best = bitcast<f32>(0x7F800000u);
                    var bad = false;
                    for (var k = 0u; k < WG; k++) {
                        let key = wf_wg_key[k];
                        let i = wf_wg_idx[k];
                        bad = bad || key < 0.0;
                        if (i != NO_NODE && key >= 0.0 && (key < best || (key == best && i < picked))) {
                            best = key;
                            picked = i;
                        }
                    }
                    stats[STAT_ERVS_EDGES] += d;
                    if (bad) {
                        picked = NO_NODE;
                    } else if (picked != NO_NODE) {
                        stats[STAT_ERVS] += 1u;
                    }
                }
                workgroupBarrier();
            }
        }
        wf_lane_step(&me, base, picked, &stats);
    }
    wf_lane_check(me);
    wf_flush_stats(stats, local, group.x);
}
