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
    let _e4 = !(_e3);
    let _e6 = wf_param(0u);
    let _e7 = bitcast<f32>(_e6);
    let _e13 = wf_cur;
    let _e14 = wf_wmin(_e13);
    let _e17 = wf_cur;
    let _e18 = wf_wmax(_e17);
    let _e27 = wf_cur;
    let _e28 = wf_wmax(_e27);
    let _e33 = wf_cur;
    let _e34 = wf_wmax(_e33);
    let _e39 = wf_param(1u);
    let _e40 = bitcast<f32>(_e39);
    let _e46 = wf_cur;
    let _e47 = wf_wmin(_e46);
    let _e50 = wf_cur;
    let _e51 = wf_wmax(_e50);
    let _e58 = max(max(max(0f, select(0f, _e28, _e3)), select(0f, _e34, !(_e3))), select(0f, select(bitcast<f32>(2139095040u), max((_e47 / _e40), (_e51 / _e40)), ((_e40 > 0f) || (_e40 < 0f))), !(_e3)));
    if (select(0f, select(bitcast<f32>(2139095040u), max((_e14 / _e7), (_e18 / _e7)), ((_e7 > 0f) || (_e7 < 0f))), _e4) <= _e58) {
        local_10 = _e58;
    } else {
        if _e4 {
            if ((_e7 > 0f) || (_e7 < 0f)) {
                let _e68 = wf_cur;
                let _e69 = wf_wmin(_e68);
                let _e72 = wf_cur;
                let _e74 = wf_prev;
                let _e75 = wf_back_weight(_e72, _e74);
                local_12 = max((_e69 / _e7), (_e75 / _e7));
            } else {
                local_12 = bitcast<f32>(2139095040u);
            }
            let _e80 = local_12;
            local_11 = _e80;
        } else {
            local_11 = 0f;
        }
        let _e81 = local_11;
        local_10 = max(_e58, _e81);
    }
    let _e83 = local_10;
    return _e83;
}

fn wf_estimate() -> f32 {
    let _e1 = wf_step;
    let _e3 = (_e1 == 0u);
    let _e5 = wf_cur;
    let _e6 = wf_wsum(_e5);
    let _e15 = wf_cur;
    let _e16 = wf_wsum(_e15);
    let _e24 = wf_param(1u);
    let _e28 = wf_cur;
    let _e29 = wf_wsum(_e28);
    return (((select(0f, _e6, _e3) + select(0f, 0f, !(_e3))) + select(0f, (_e16 * 0.5f), !(_e3))) + select(0f, (((1f / bitcast<f32>(_e24)) * _e29) * 0.5f), !(_e3)));
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
