// Standalone host program for `wayfarer emit`: loads a .wfg graph, computes the per-node
// arrays the walk's bound needs (the preprocessing kernels above), runs the walk kernel above on GPU 0, and writes the walks as
// a .npy matrix of uint32 (internal node ids, padded with 4294967295 after an early end).
//
//   nvcc -O3 -arch=sm_90 walk.cu -o walk
//   ./walk graph.wfg walks.npy [length=80] [seed=0] [walks_per_node=1] [adaptive|erjs|ervs]
//
// It checks the .wfg's magic, version and section bounds, not its checksums: `wayfarer info`
// verifies a file in full. The parameters were fixed when the file was emitted (WF_PARAMS).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <string>

#define WF_CHECK(x) do { cudaError_t err_ = (x); if (err_ != cudaSuccess) { \
    fprintf(stderr, "CUDA error %s at %s:%d: %s\n", cudaGetErrorName(err_), __FILE__, __LINE__, cudaGetErrorString(err_)); exit(2); } } while (0)

static void wf_die(const char* what, const char* path) { fprintf(stderr, "%s: %s\n", path, what); exit(1); }

template <typename T> static T* wf_upload(const T* host, size_t n) {
    if (n == 0 || host == nullptr) return nullptr;
    T* d = nullptr;
    WF_CHECK(cudaMalloc(&d, n * sizeof(T)));
    WF_CHECK(cudaMemcpy(d, host, n * sizeof(T), cudaMemcpyHostToDevice));
    return d;
}

template <typename T> static T* wf_zeroed(size_t n) {
    T* d = nullptr;
    WF_CHECK(cudaMalloc(&d, n * sizeof(T)));
    WF_CHECK(cudaMemset(d, 0, n * sizeof(T)));
    return d;
}

int main(int argc, char** argv) {
    if (argc < 3) { fprintf(stderr, "usage: %s graph.wfg walks.npy [length] [seed] [walks_per_node] [adaptive|erjs|ervs]\n", argv[0]); return 1; }
    const char* path = argv[1];
    const u32 length = argc > 3 ? (u32)strtoul(argv[3], nullptr, 10) : 80u;
    const u64 seed = argc > 4 ? strtoull(argv[4], nullptr, 10) : 0ull;
    const u64 per_node = argc > 5 ? strtoull(argv[5], nullptr, 10) : 1ull;
    const u32 mode = argc > 6 ? (!strcmp(argv[6], "erjs") ? 1u : !strcmp(argv[6], "ervs") ? 2u : 0u) : 0u;

    // ---- the graph ----
    FILE* f = fopen(path, "rb");
    if (!f) wf_die("cannot open", path);
    std::vector<unsigned char> file;
    unsigned char chunk[1 << 16];
    size_t got;
    while ((got = fread(chunk, 1, sizeof(chunk), f)) > 0) file.insert(file.end(), chunk, chunk + got);
    fclose(f);
    if (file.size() < 64 || memcmp(file.data(), "\x89WFG\r\n\x1a\n", 8) != 0) wf_die("not a .wfg file (bad magic)", path);
    u32 version, sections; u64 n, m;
    memcpy(&version, &file[8], 4); memcpy(&sections, &file[12], 4); memcpy(&n, &file[16], 8); memcpy(&m, &file[24], 8);
    if (version != 1) wf_die("unsupported .wfg version", path);
    if (n == 0 || n >= 0xFFFFFFFFull) wf_die("node count out of range", path);
    const u64* offsets = nullptr; const u32* targets = nullptr; const float* weights = nullptr;
    const u32* labels = nullptr; const i64* times = nullptr;
    std::vector<std::pair<std::string, const float*>> props;
    for (u32 s = 0; s < sections; ++s) {
        size_t at = 64 + (size_t)s * 64;
        if (at + 64 > file.size()) wf_die("truncated section directory", path);
        u32 kind, elem; u64 off, count;
        memcpy(&kind, &file[at], 4); memcpy(&elem, &file[at + 4], 4); memcpy(&off, &file[at + 8], 8); memcpy(&count, &file[at + 16], 8);
        size_t width = elem == 2 || elem == 4 ? 8 : 4;
        if (off > file.size() || count > (file.size() - off) / width || off % 8 != 0) wf_die("section out of bounds", path);
        const void* p = &file[off];
        switch (kind) {
            case 1: if (count != n + 1) wf_die("bad offsets section", path); offsets = (const u64*)p; break;
            case 2: if (count != m) wf_die("bad targets section", path); targets = (const u32*)p; break;
            case 3: if (count != m) wf_die("bad weights section", path); weights = (const float*)p; break;
            case 4: if (count != m) wf_die("bad labels section", path); labels = (const u32*)p; break;
            case 5: if (count != m) wf_die("bad timestamps section", path); times = (const i64*)p; break;
            case 7: {
                char name[41] = {0}; memcpy(name, &file[at + 24], 40);
                if (count != n) wf_die("bad node property section", path);
                props.push_back({std::string(name), (const float*)p});
                break;
            }
            default: break;
        }
    }
    if (!offsets || !targets || offsets[n] != m) wf_die("missing or inconsistent CSR sections", path);
    for (u64 e = 0; e < m; ++e) if (targets[e] >= n) wf_die("an edge points outside the graph", path);
    if (WF_NEEDS_LABELS && !labels) wf_die("this walk reads edge labels, which the graph does not have", path);
    if (WF_NEEDS_TIMES && !times) wf_die("this walk reads edge timestamps, which the graph does not have", path);

    // ---- labels with per-label arrays (what the walk's bound and estimate read) ----
    u32 label_k = 0;
    if (WF_NEEDS_LABEL_STATS && labels) {
        for (u64 e = 0; e < m; ++e) label_k = labels[e] + 1 > label_k ? labels[e] + 1 : label_k;
        if (label_k > 64) label_k = 0;  // whole-row aggregates instead, as the runtime does
    }
    std::vector<const float*> prop_ptrs;
    for (int i = 0; i < (int)WF_NUM_PROPS; ++i) {
        const float* found = nullptr;
        for (auto& pr : props) if (pr.first == WF_PROP_NAMES[i]) found = pr.second;
        if (!found) { fprintf(stderr, "%s: this walk reads node property `%s`, which the graph does not have\n", path, WF_PROP_NAMES[i]); return 1; }
        prop_ptrs.push_back(wf_upload(found, n));
    }

    // ---- upload, then the per-node arrays on the device (kernels/prep.cu, as the runtime) ----
    WfGraph g;
    memset(&g, 0, sizeof(g));
    g.num_nodes = (u32)n;
    g.offsets = wf_upload(offsets, n + 1); g.targets = wf_upload(targets, m);
    g.weights = wf_upload(weights, weights ? m : 0); g.labels = wf_upload(labels, labels ? m : 0); g.timestamps = wf_upload(times, times ? m : 0);
    g.node_props = (const float* const*)wf_upload(prop_ptrs.data(), prop_ptrs.size());
    int sms = 0; WF_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    if (weights) {
        uint2* edges = wf_zeroed<uint2>(m);
        wf_prep_edges<<<sms * 8, 256>>>(g.targets, g.weights, edges, m);
        g.edges = edges;
    }
    if (WF_NEEDS_WEIGHT_STATS) {
        float4* nw = wf_zeroed<float4>(n);
        float *wmax = wf_zeroed<float>(n), *wmin = wf_zeroed<float>(n), *wsum = wf_zeroed<float>(n);
        wf_prep_weight_stats<<<sms * 8, 256>>>(g.offsets, g.weights, (u32)n, nw, wmax, wmin, wsum);
        g.node_w = nw; g.weight_max = wmax; g.weight_min = wmin; g.weight_sum = wsum;
    }
    if (label_k) {
        float4* lstats = wf_zeroed<float4>(n * label_k);
        wf_prep_label_stats<<<sms * 8, 256>>>(g.offsets, g.weights, g.labels, (u32)n, label_k, lstats);
        g.label_k = label_k; g.label_stats = lstats;
    }
    if (WF_NEEDS_NEIGHBOR_DEGREE) {
        u32 *ndmax = wf_zeroed<u32>(n), *ndmin = wf_zeroed<u32>(n);
        wf_prep_neighbor_degree<<<sms * 8, 256>>>(g.offsets, g.targets, (u32)n, ndmax, ndmin);
        g.nbr_degree_max = ndmax; g.nbr_degree_min = ndmin;
    }
    WF_CHECK(cudaGetLastError());
    WF_CHECK(cudaDeviceSynchronize());

    const u64 walks = n * per_node, stride = (u64)length + 1;
    WfParams params = WF_PARAMS;
    WfRunArgs a;
    memset(&a, 0, sizeof(a));
    a.first_query = 0; a.num_queries = walks; a.seed = seed; a.length = length; a.mode = mode;
    a.ratio = WF_COST_R; a.fixed = WF_COST_F; a.ratio_short = WF_COST_R; a.short_row = 64; a.per_node_starts = 1;
    WF_CHECK(cudaMalloc(&a.out, walks * stride * sizeof(u32)));
    WF_CHECK(cudaMalloc(&a.lens, walks * sizeof(u32)));
    WF_CHECK(cudaMalloc(&a.counter, sizeof(u64))); WF_CHECK(cudaMemset(a.counter, 0, sizeof(u64)));
    WF_CHECK(cudaMalloc(&a.stats, WF_NUM_STATS * sizeof(u64))); WF_CHECK(cudaMemset(a.stats, 0, WF_NUM_STATS * sizeof(u64)));
    WF_CHECK(cudaMalloc(&a.error, 5 * sizeof(u64))); WF_CHECK(cudaMemset(a.error, 0, 5 * sizeof(u64)));
    WfParams* pd = wf_upload(&params, 1);
    cudaEvent_t t0, t1; WF_CHECK(cudaEventCreate(&t0)); WF_CHECK(cudaEventCreate(&t1));
    WF_CHECK(cudaEventRecord(t0));
    wf_walk<<<sms * 8, 256>>>(g, pd, a);
    WF_CHECK(cudaGetLastError());
    WF_CHECK(cudaEventRecord(t1)); WF_CHECK(cudaEventSynchronize(t1));
    float ms = 0.0f; WF_CHECK(cudaEventElapsedTime(&ms, t0, t1));
    u64 err[5], stats[WF_NUM_STATS];
    WF_CHECK(cudaMemcpy(err, a.error, sizeof(err), cudaMemcpyDeviceToHost));
    WF_CHECK(cudaMemcpy(stats, a.stats, sizeof(stats), cudaMemcpyDeviceToHost));
    if (err[0]) { fprintf(stderr, "walk error %llu at query %llu, step %llu, edge %llu (weight bits %08llx)\n", err[0], err[1], err[2], err[3], err[4] & 0xFFFFFFFFull); return 3; }
    std::vector<u32> out(walks * stride);
    WF_CHECK(cudaMemcpy(out.data(), a.out, out.size() * sizeof(u32), cudaMemcpyDeviceToHost));

#if WF_ANONYMOUS
    // First-visit indices (0 1 0 2 for a b a c), as `wayfarer walk anonymous` writes them.
    for (u64 q = 0; q < walks; ++q) {
        u32* row = &out[q * stride];
        std::vector<u32> seen;
        for (u64 i = 0; i < stride && row[i] != 0xFFFFFFFFu; ++i) {
            u32 k = 0;
            while (k < seen.size() && seen[k] != row[i]) ++k;
            if (k == seen.size()) seen.push_back(row[i]);
            row[i] = k;
        }
    }
#endif
    // ---- .npy ----
    FILE* o = fopen(argv[2], "wb");
    if (!o) wf_die("cannot create", argv[2]);
    char header[128];
    int len = snprintf(header, sizeof(header), "{'descr': '<u4', 'fortran_order': False, 'shape': (%llu, %llu), }", walks, stride);
    int total = 10 + len + 1, pad = (64 - total % 64) % 64;
    fwrite("\x93NUMPY\x01\x00", 1, 8, o);
    unsigned short hl = (unsigned short)(len + pad + 1);
    fwrite(&hl, 2, 1, o);
    fwrite(header, 1, len, o);
    for (int i = 0; i < pad; ++i) fputc(' ', o);
    fputc('\n', o);
    fwrite(out.data(), sizeof(u32), out.size(), o);
    fclose(o);
    printf("%s: %llu walks, %llu steps in %.3f ms (%.1f M steps/s); eRJS %llu, eRVS %llu, dead ends %llu\n", WF_WALK_NAME, walks, stats[WF_STAT_STEPS], ms,
           stats[WF_STAT_STEPS] / (ms * 1e3), stats[WF_STAT_ERJS], stats[WF_STAT_ERVS], stats[WF_STAT_DEAD_ENDS]);
    return 0;
}
