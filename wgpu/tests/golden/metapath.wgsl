fn wf_flags() -> u32 {
    return 3u;
}

fn wf_weight(e_5: u32) -> f32 {
    let _e1 = wf_label(e_5);
    let _e3 = wf_step;
    let _e5 = wf_param(16u);
    let _e7 = (_e5 == 0u);
    let _e11 = select((_e3 % select(_e5, 1u, _e7)), 0u, _e7);
    let _e20 = wf_param((0u + (min(_e11, 15u) * 1u)));
    let _e24 = wf_h(e_5);
    return select(0f, _e24, (_e1 == select(0u, _e20, (_e11 < 16u))));
}

fn wf_bound() -> f32 {
    let _e1 = wf_cur;
    let _e3 = wf_step;
    let _e5 = wf_param(16u);
    let _e7 = (_e5 == 0u);
    let _e11 = select((_e3 % select(_e5, 1u, _e7)), 0u, _e7);
    let _e20 = wf_param((0u + (min(_e11, 15u) * 1u)));
    let _e23 = wf_label_max(_e1, select(0u, _e20, (_e11 < 16u)));
    return _e23;
}

fn wf_estimate() -> f32 {
    let _e1 = wf_cur;
    let _e3 = wf_step;
    let _e5 = wf_param(16u);
    let _e7 = (_e5 == 0u);
    let _e11 = select((_e3 % select(_e5, 1u, _e7)), 0u, _e7);
    let _e20 = wf_param((0u + (min(_e11, 15u) * 1u)));
    let _e23 = wf_label_sum(_e1, select(0u, _e20, (_e11 < 16u)));
    return _e23;
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
