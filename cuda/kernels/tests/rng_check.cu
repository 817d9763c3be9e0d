// GPU check of the CUDA prelude's Philox streams against the CPU's (runtime/src/rng.rs pins
// the same numbers). Built and run by scripts/gpu-check.sh: nvcc -arch=sm_90 rng_check.cu.
#include <cstdio>
#include "../prelude.cuh"

__global__ void rng_kernel(u32* out) {
    const u32 ctr[3][4] = {{0, 0, 0, 0}, {~0u, ~0u, ~0u, ~0u}, {0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}};
    const u32 key[3][2] = {{0, 0}, {~0u, ~0u}, {0xa4093822u, 0x299f31d0u}};
    for (int i = 0; i < 3; ++i) {
        WfU32x4 c = {ctr[i][0], ctr[i][1], ctr[i][2], ctr[i][3]};
        WfU32x4 r = wf_philox(c, key[i][0], key[i][1]);
        out[4 * i] = r.x; out[4 * i + 1] = r.y; out[4 * i + 2] = r.z; out[4 * i + 3] = r.w;
    }
    WfRng s = wf_rng(7ull, 3ull, 1u, WF_SAMPLE);
    for (int i = 0; i < 8; ++i) out[12 + i] = wf_next_u32(s);
}

int main() {
    const u32 want[20] = {
        0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u,  // Random123 known answers
        0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu,
        0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u,
        0xfa43867au, 0x30bcecabu, 0x40122b19u, 0x96bc54d0u,  // StepRng::new(7, 3, 1, Sample)
        0x42e11c14u, 0xf0b5d328u, 0xc2d65c52u, 0x4cdfb60du,
    };
    u32* d = nullptr;
    u32 got[20];
    if (cudaMalloc(&d, sizeof(got)) != cudaSuccess) { printf("rng_check: cudaMalloc failed\n"); return 2; }
    rng_kernel<<<1, 1>>>(d);
    if (cudaMemcpy(got, d, sizeof(got), cudaMemcpyDeviceToHost) != cudaSuccess) { printf("rng_check: kernel failed\n"); return 2; }
    int bad = 0;
    for (int i = 0; i < 20; ++i) {
        if (got[i] != want[i]) { printf("rng_check: word %d is %08x, want %08x\n", i, got[i], want[i]); ++bad; }
    }
    printf("rng_check: %s (%d of 20 words differ)\n", bad ? "FAIL" : "ok", bad);
    return bad ? 1 : 0;
}
