// Writes TRUST's preprocessing input, `1.mmio`, straight from a wayfarer .wfg graph: the file
// TRUST's own first tool (Preprocess/fromDirectToUndirect.cpp) writes from a text edge list,
// byte for byte, without reading or writing hundreds of millions of text lines through
// stringstreams (minutes at R-MAT 24). Its rules, kept here: the nodes with at least one edge
// are numbered 1..k in id order; each entry (u, v) becomes (min, max) of the new ids; each
// node's list is sorted ascending and deduplicated (a self loop stays, once); the header is
// "k k m" and each edge a line "u v". TRUST's second tool (their orientation and degree
// reordering) then runs on it as before. scripts/triangle-peers.sh builds and runs this.
//
//   trust_mmio GRAPH.wfg OUT.mmio
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

static int fail(const std::string &what) {
    fprintf(stderr, "trust_mmio: %s\n", what.c_str());
    return 2;
}

int main(int argc, char **argv) {
    if (argc != 3) return fail("usage: trust_mmio GRAPH.wfg OUT.mmio");
    int fd = open(argv[1], O_RDONLY);
    if (fd < 0) return fail(std::string(argv[1]) + ": cannot open");
    struct stat st;
    fstat(fd, &st);
    size_t size = st.st_size;
    if (size < 64) return fail(std::string(argv[1]) + ": too short for a .wfg");
    const uint8_t *buf = (const uint8_t *)mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (buf == MAP_FAILED) return fail(std::string(argv[1]) + ": cannot map");
    if (memcmp(buf, "\x89WFG\r\n\x1a\n", 8) != 0) return fail(std::string(argv[1]) + ": not a .wfg");
    uint32_t sections;
    uint64_t n, m;
    memcpy(&sections, buf + 12, 4);
    memcpy(&n, buf + 16, 8);
    memcpy(&m, buf + 24, 8);
    const uint8_t *off_at = nullptr, *tgt_at = nullptr;
    uint32_t off_elem = 0;
    for (uint32_t i = 0; i < sections; i++) {
        uint32_t kind, elem;
        uint64_t at, count;
        const uint8_t *h = buf + 64 + 64 * (size_t)i;
        if ((size_t)(h - buf) + 24 > size) return fail("section table past the file's end");
        memcpy(&kind, h, 4);
        memcpy(&elem, h + 4, 4);
        memcpy(&at, h + 8, 8);
        memcpy(&count, h + 16, 8);
        if (kind == 1) { off_at = buf + at; off_elem = elem; if (count != n + 1) return fail("offsets: not n + 1"); }
        if (kind == 2) { tgt_at = buf + at; if (count != m || elem != 1) return fail("targets: not m u32"); }
    }
    if (!off_at || !tgt_at || (off_elem != 1 && off_elem != 2)) return fail("no CSR sections");
    auto offset = [&](uint64_t v) -> uint64_t {
        if (off_elem == 2) { uint64_t x; memcpy(&x, off_at + 8 * v, 8); return x; }
        uint32_t x; memcpy(&x, off_at + 4 * v, 4); return x;
    };
    const uint32_t *targets = (const uint32_t *)tgt_at;
    if (n >= (1u << 31)) return fail("more nodes than TRUST's int ids hold");
    // New ids: the nodes any entry touches, 1..k in id order.
    std::vector<int32_t> id(n, 0);
    for (uint64_t u = 0; u < n; u++) {
        uint64_t b = offset(u), e = offset(u + 1);
        if (b < e) id[u] = 1;
        for (uint64_t i = b; i < e; i++) id[targets[i]] = 1;
    }
    int32_t k = 0;
    for (uint64_t u = 0; u < n; u++) if (id[u]) id[u] = ++k;
    // Each entry under its lower end (a counting sort), then sorted and deduplicated per node.
    std::vector<uint64_t> start(k + 2, 0);
    for (uint64_t u = 0; u < n; u++)
        for (uint64_t i = offset(u), e = offset(u + 1); i < e; i++) start[std::min(id[u], id[targets[i]]) + 1]++;
    for (int32_t v = 0; v <= k; v++) start[v + 1] += start[v];
    std::vector<int32_t> upper(m);
    std::vector<uint64_t> fill(start.begin(), start.end() - 1);
    for (uint64_t u = 0; u < n; u++)
        for (uint64_t i = offset(u), e = offset(u + 1); i < e; i++) {
            int32_t a = id[u], b = id[targets[i]];
            upper[fill[std::min(a, b)]++] = std::max(a, b);
        }
    uint64_t edges = 0;
    std::vector<uint64_t> kept(k + 1, 0);
    for (int32_t v = 0; v <= k; v++) {
        int32_t *lo = upper.data() + start[v], *hi = upper.data() + start[v + 1];
        std::sort(lo, hi);
        kept[v] = std::unique(lo, hi) - lo;
        edges += kept[v];
    }
    if (edges > (uint64_t)INT32_MAX) return fail("more edges than TRUST's int counts hold");
    FILE *out = fopen(argv[2], "w");
    if (!out) return fail(std::string(argv[2]) + ": cannot create");
    static char line[1 << 20];
    setvbuf(out, nullptr, _IOFBF, 1 << 24);
    fprintf(out, "%d %d %llu\n", k, k, (unsigned long long)edges);
    // "u v\n" with a hand-rolled itoa: printf is the slow part at R-MAT 24.
    auto put = [](char *p, uint32_t x) -> char * {
        char tmp[12];
        int t = 0;
        do { tmp[t++] = '0' + x % 10; x /= 10; } while (x);
        while (t) *p++ = tmp[--t];
        return p;
    };
    size_t used = 0;
    for (int32_t v = 0; v <= k; v++)
        for (uint64_t i = start[v]; i < start[v] + kept[v]; i++) {
            if (used > sizeof(line) - 32) { fwrite(line, 1, used, out); used = 0; }
            char *p = put(line + used, v);
            *p++ = ' ';
            p = put(p, upper[i]);
            *p++ = '\n';
            used = p - line;
        }
    fwrite(line, 1, used, out);
    if (fclose(out) != 0) return fail(std::string(argv[2]) + ": write failed");
    return 0;
}
