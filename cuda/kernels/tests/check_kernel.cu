// Calls every generated device function, so compiling it (NVRTC in CI, nvcc in
// scripts/gpu-check.sh) compiles all of them.
extern "C" __global__ void wf_check(WfGraph g, const WfParams* p, WfWalker* ws, float* out, u64 seed) {
    WfWalker w = ws[threadIdx.x];
    WfRng rng = wf_rng(seed, threadIdx.x, 0u, WF_INIT);
    wf_init(g, *p, w, rng);
    out[3 * threadIdx.x] = wf_weight(g, *p, w, g.offsets[w.b.cur], wf_dst(g, g.offsets[w.b.cur]));
    out[3 * threadIdx.x + 1] = wf_bound(g, *p, w) + wf_estimate(g, *p, w);
    wf_update(g, *p, w, rng);
    out[3 * threadIdx.x + 2] = wf_stop(g, *p, w, rng) ? 1.0f : 0.0f;
    ws[threadIdx.x] = w;
}
