fn wf_flags() -> u32 {
    return 1u;
}

fn wf_weight(e_5: u32) -> f32 {
    var local_8: f32;

    let _e2 = wf_prev;
    if (_e2 == 4294967295u) {
        local_8 = 1f;
    } else {
        let _e7 = wf_dst(e_5);
        let _e8 = wf_has_edge(_e2, _e7);
        let _e11 = wf_param(0u);
        let _e12 = bitcast<f32>(_e11);
        let _e15 = wf_cur;
        let _e16 = wf_degree(_e15);
        let _e18 = ((1f - _e12) / f32(_e16));
        let _e19 = wf_degree(_e2);
        local_8 = select(_e18, (_e18 + (_e12 / f32(_e19))), _e8);
    }
    let _e24 = local_8;
    return _e24;
}

fn wf_bound() -> f32 {
    let _e1 = wf_prev;
    let _e7 = wf_param(0u);
    let _e8 = bitcast<f32>(_e7);
    let _e11 = wf_cur;
    let _e12 = wf_degree(_e11);
    let _e14 = ((1f - _e8) / f32(_e12));
    let _e15 = wf_degree(_e1);
    return select(max(max(0f, (_e14 + (_e8 / f32(_e15)))), _e14), 1f, (_e1 == 4294967295u));
}

fn wf_estimate() -> f32 {
    let _e1 = wf_prev;
    let _e5 = wf_cur;
    let _e6 = wf_degree(_e5);
    let _e7 = f32(_e6);
    let _e10 = wf_param(0u);
    let _e11 = bitcast<f32>(_e10);
    let _e14 = wf_cur;
    let _e15 = wf_degree(_e14);
    let _e17 = ((1f - _e11) / f32(_e15));
    let _e18 = wf_degree(_e1);
    return select(((((_e17 + (_e11 / f32(_e18))) * _e7) * 0.5f) + ((_e17 * _e7) * 0.5f)), _e7, (_e1 == 4294967295u));
}

fn wf_reset_state() {
}

fn wf_init() {
}

fn wf_update() {
}

fn wf_stop() -> bool {
    return false;
}
