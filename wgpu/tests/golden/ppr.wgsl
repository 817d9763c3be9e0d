fn wf_flags() -> u32 {
    return 3u;
}

fn wf_weight(e_5: u32) -> f32 {
    let _e1 = wf_h(e_5);
    return _e1;
}

fn wf_bound() -> f32 {
    let _e1 = wf_cur;
    let _e2 = wf_wmax(_e1);
    return _e2;
}

fn wf_estimate() -> f32 {
    let _e1 = wf_cur;
    let _e2 = wf_wsum(_e1);
    return _e2;
}

fn wf_reset_state() {
}

fn wf_init() {
}

fn wf_update() {
    var draw0_: f64;

    let _e0 = wf_hook_u32_();
    draw0_ = ((f64(_e0) + 0.5lf) * 2.3283064365386963e-10lf);
    let _e7 = draw0_;
    let _e9 = wf_param(0u);
    let _e12 = (_e7 < f64(bitcast<f32>(_e9)));
    let _e14 = wf_start;
    let _e16 = wf_cur;
    let _e20 = wf_prev;
    wf_cur = select(_e16, _e14, _e12);
    wf_prev = select(_e20, 4294967295u, _e12);
}

fn wf_stop() -> bool {
    return false;
}
