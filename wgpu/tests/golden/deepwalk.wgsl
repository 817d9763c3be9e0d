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
}

fn wf_stop() -> bool {
    return false;
}
