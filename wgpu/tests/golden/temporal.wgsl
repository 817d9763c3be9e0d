var<private> wf_state_last: f64;
fn wf_flags() -> u32 {
    return 1u;
}

fn wf_weight(e_5: u32) -> f32 {
    let _e2 = wf_time_part(e_5, 0u);
    let _e5 = wf_time_part(e_5, 1u);
    let _e9 = wf_time_part(e_5, 2u);
    let _e13 = wf_state_last;
    let _e15 = wf_h(e_5);
    return select(0f, _e15, (((f64(_e2) + f64(_e5)) + f64(_e9)) > _e13));
}

fn wf_bound() -> f32 {
    let _e1 = wf_cur;
    let _e2 = wf_wmax(_e1);
    return _e2;
}

fn wf_estimate() -> f32 {
    let _e1 = wf_cur;
    let _e2 = wf_wsum(_e1);
    return (_e2 * 0.5f);
}

fn wf_reset_state() {
    wf_state_last = f64();
}

fn wf_init() {
    wf_state_last = f64(bitcast<f32>(4286578688u));
}

fn wf_update() {
    let _e1 = wf_edge;
    let _e3 = wf_time_part(_e1, 0u);
    let _e6 = wf_time_part(_e1, 1u);
    let _e10 = wf_time_part(_e1, 2u);
    wf_state_last = ((f64(_e3) + f64(_e6)) + f64(_e10));
}

fn wf_stop() -> bool {
    return false;
}
