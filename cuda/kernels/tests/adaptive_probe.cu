// The adaptive rule alone: wf_prefers_reservoir and wf_trial_cap, cut out of walk.cu as they
// are (with WfRunArgs), evaluated for a table of cases, one thread per case. Spliced after the
// prelude and those cut-out items (cuda/src/probe.rs).

extern "C" __global__ void wf_adaptive_probe(const WfRunArgs* ap, const u32* d, const float* bound, const float* estimate, u32 n,
                                             u32* answers) {
    const WfRunArgs a = *ap;
    for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        answers[2 * i] = wf_prefers_reservoir(a, d[i], bound[i], estimate[i]) ? 1u : 0u;
        answers[2 * i + 1] = wf_trial_cap(a, d[i]);
    }
}
