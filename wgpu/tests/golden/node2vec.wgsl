fn wf_flags() -> u32 {
    return 1u;
}

fn wf_weight(e_5: u32) -> f32 {
    var local_8: f32;
    var local_9: f32;

    let _e2 = wf_step;
    if (_e2 == 0u) {
        let _e6 = wf_h(e_5);
        local_8 = _e6;
    } else {
        let _e7 = wf_dst(e_5);
        let _e9 = wf_prev;
        if (_e7 == _e9) {
            let _e12 = wf_h(e_5);
            let _e14 = wf_param(0u);
            local_9 = (_e12 / bitcast<f32>(_e14));
        } else {
            let _e17 = wf_has_edge(_e9, _e7);
            let _e18 = wf_h(e_5);
            let _e20 = wf_param(1u);
            local_9 = select((_e18 / bitcast<f32>(_e20)), _e18, _e17);
        }
        let _e24 = local_9;
        local_8 = _e24;
    }
    let _e25 = local_8;
    return _e25;
}

fn wf_bound() -> f32 {
    var local_10: f32;
    var local_11: f32;
    var local_12: f32;

    let _e1 = wf_step;
    let _e3 = (_e1 == 0u);
    let _e6 = wf_param(0u);
    let _e7 = bitcast<f32>(_e6);
    let _e10 = ((_e7 > 0f) || (_e7 < 0f));
    let _e12 = wf_cur;
    let _e13 = wf_wmin(_e12);
    let _e14 = (_e13 / _e7);
    let _e16 = wf_cur;
    let _e17 = wf_wmax(_e16);
    let _e21 = bitcast<f32>(2139095040u);
    let _e25 = wf_param(1u);
    let _e26 = bitcast<f32>(_e25);
    let _e35 = max(_e17, select(select(_e21, max((_e13 / _e26), (_e17 / _e26)), ((_e26 > 0f) || (_e26 < 0f))), 0f, _e3));
    if (select(select(_e21, max(_e14, (_e17 / _e7)), _e10), 0f, _e3) <= _e35) {
        local_10 = _e35;
    } else {
        if _e3 {
            local_11 = 0f;
        } else {
            if _e10 {
                let _e41 = wf_cur;
                let _e43 = wf_prev;
                let _e44 = wf_back_weight(_e41, _e43);
                local_12 = max(_e14, (_e44 / _e7));
            } else {
                local_12 = _e21;
            }
            let _e47 = local_12;
            local_11 = _e47;
        }
        let _e48 = local_11;
        local_10 = max(_e35, _e48);
    }
    let _e50 = local_10;
    return _e50;
}

fn wf_estimate() -> f32 {
    let _e1 = wf_step;
    let _e5 = wf_cur;
    let _e6 = wf_wsum(_e5);
    let _e11 = wf_param(1u);
    return select(((_e6 * 0.5f) + (((1f / bitcast<f32>(_e11)) * _e6) * 0.5f)), _e6, (_e1 == 0u));
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
