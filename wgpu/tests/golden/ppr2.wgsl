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
    let _e2 = wf_prev;
    let _e4 = (_e2 == 4294967295u);
    let _e11 = wf_param(0u);
    let _e12 = bitcast<f32>(_e11);
    let _e15 = wf_cur;
    let _e16 = wf_degree(_e15);
    let _e18 = ((1f - _e12) / f32(_e16));
    let _e19 = wf_degree(_e2);
    return max(max(max(0f, select(0f, 1f, _e4)), select(0f, (_e18 + (_e12 / f32(_e19))), !(_e4))), select(0f, _e18, !(_e4)));
}

fn wf_estimate() -> f32 {
    let _e1 = wf_prev;
    let _e3 = (_e1 == 4294967295u);
    let _e5 = wf_cur;
    let _e6 = wf_degree(_e5);
    let _e13 = wf_param(0u);
    let _e14 = bitcast<f32>(_e13);
    let _e17 = wf_cur;
    let _e18 = wf_degree(_e17);
    let _e20 = ((1f - _e14) / f32(_e18));
    let _e21 = wf_degree(_e1);
    let _e26 = wf_cur;
    let _e27 = wf_degree(_e26);
    let _e36 = wf_cur;
    let _e37 = wf_degree(_e36);
    return ((select(0f, f32(_e6), _e3) + select(0f, (((_e20 + (_e14 / f32(_e21))) * f32(_e27)) * 0.5f), !(_e3))) + select(0f, ((_e20 * f32(_e37)) * 0.5f), !(_e3)));
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
