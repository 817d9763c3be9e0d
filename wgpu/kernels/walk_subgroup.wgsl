// wayfarer walk kernel, subgroup variant: appended to walk.wgsl when the adapter has subgroup
// operations (naga takes the subgroup builtins without `enable subgroups;`).
//
// The walk loop runs in lockstep across the subgroup (its only exit is subgroupAll), each
// invocation with its own walker; eRJS steps are the invocation's own, as in wf_walk, but an
// eRVS step is served by the whole subgroup: the invocations that need one are found by a
// ballot and served in turn, every invocation taking the walker's row items lane, lane + S,
// ... (coalesced) and running A-ExpJ over its share with its own stream; thresholds are
// shared by subgroupMin at growing intervals (an item whose key cannot beat the subgroup's
// best is skipped, which is exact), and the smallest key wins (ties: the smaller index).

// HOOK: copies the walker's state into the saved copies.
fn wf_state_save() {
}

// HOOK: the saved copies back into the walker's state.
fn wf_state_restore() {
}

// HOOK: the state of the walker in invocation `src` of the subgroup, into this one's.
fn wf_state_adopt(src: u32) {
}

struct SgPick {
    index: u32,
    edges: u32,
}

// eRVS of the walker in invocation `src`, by the whole subgroup. Every invocation calls it
// with the same `src` (subgroup-uniform control flow).
fn wf_reservoir_subgroup(src: u32, lane: u32, size: u32, my_gq: u32, my_base: u32, my_d: u32) -> SgPick {
    let gq = subgroupShuffle(my_gq, src);
    let base = subgroupShuffle(my_base, src);
    let d = subgroupShuffle(my_d, src);
    // This invocation evaluates the weights as walker `src`.
    let own = vec4<u32>(wf_cur, wf_prev, wf_start, wf_step);
    let own_edge = wf_edge;
    wf_state_save();
    wf_cur = subgroupShuffle(own.x, src);
    wf_prev = subgroupShuffle(own.y, src);
    wf_start = subgroupShuffle(own.z, src);
    wf_step = subgroupShuffle(own.w, src);
    wf_edge = subgroupShuffle(own_edge, src);
    wf_state_adopt(src);

    var rng = wf_rng(gq, wf_step, PURPOSE_SAMPLE);
    rng.ctr.x = 0x80000000u | (lane << 24u);   // per lane, disjoint from the step's eRJS draws
    var x = wf_expj_new();
    var round = 0u;
    var next_sync = 1u;
    for (var r0 = 0u; r0 < d; r0 += size) {
        let i = r0 + lane;
        if (i < d) {
            let wi = wf_weight(base + i);
            if (wf_bad(wi)) {
                wf_report(ERR_BAD_WEIGHT, gq, wf_step, base + i, wi, 0.0);
            } else if (wi > 0.0) {
                wf_expj_offer(&x, &rng, i, wi);
            }
        }
        round = round + 1u;
        if (round == next_sync) {
            next_sync = select(next_sync + 8u, 2u * next_sync, next_sync < 8u);
            wf_expj_lower(&x, subgroupMin(x.best));
        }
    }
    let m = subgroupMin(x.best);
    let winner = subgroupMin(select(NO_NODE, x.best_i, x.best == m && x.best_i != NO_NODE));

    wf_cur = own.x;
    wf_prev = own.y;
    wf_start = own.z;
    wf_step = own.w;
    wf_edge = own_edge;
    wf_state_restore();
    return SgPick(winner, d);
}

@compute @workgroup_size(64)
fn wf_walk_subgroup(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(subgroup_invocation_id) lane: u32,
    @builtin(subgroup_size) size: u32,
    @builtin(local_invocation_index) local: u32,
    @builtin(workgroup_id) group: vec3<u32>,
) {
    var stats = array<u32, 8>();
    var me = Lane(gid.x, 0u, 0u, 0u, false, false);
    loop {
        wf_lane_refill(&me, nwg.x * WG);
        if (subgroupAll(me.done)) {
            break;
        }
        var picked = NO_NODE;
        var need_ervs = false;
        var base = 0u;
        var d = 0u;
        if (me.walking) {
            base = offsets[wf_cur];
            d = offsets[wf_cur + 1u] - base;
            let c = wf_choose(me.gq, base, d, &stats);
            picked = c.picked;
            need_ervs = c.need_ervs;
        }
        // eRVS steps, served by the whole subgroup, one walker at a time.
        let ballot = subgroupBallot(need_ervs);
        for (var word = 0u; word < 4u; word++) {
            var pending = ballot[word];
            while (pending != 0u) {
                let src = word * 32u + firstTrailingBit(pending);
                pending = pending & (pending - 1u);
                let p = wf_reservoir_subgroup(src, lane, size, me.gq, base, d);
                if (lane == src) {
                    stats[STAT_ERVS_EDGES] += p.edges;
                    picked = p.index;
                    if (picked != NO_NODE) {
                        stats[STAT_ERVS] += 1u;
                    }
                }
            }
        }
        wf_lane_step(&me, base, picked, &stats);
    }
    wf_lane_check(me);
    wf_flush_stats(stats, local, group.x);
}
