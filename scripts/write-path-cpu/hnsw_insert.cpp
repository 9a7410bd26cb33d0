// The graph's insert cost without the pipeline (issue 33 goal 1): N clustered 64-d vectors added in batches of
// 64 through CHNSW's C interface (M 16, ef_construction EFC), CPU-seconds of the inserts, then recall@10 of
// Q searches (ef 64) against an exact float scan. Run by scripts/bench-write-path-cpu.sh:
//     hnsw_insert N THREADS EFC Q [clustered|uniform|FILE]
// `uniform` draws each component from U(-1, 1) and normalizes, as the OpenAI stand-in's `vector()` does
// (Sources/SluiceTesting/StandIns/openai_standin.py): the vectors the latency-bound benchmark's run inserts.
// FILE: raw float32 64-d rows (`store_vectors STORE OUT.f32`: a store's own vectors, in its build's order);
// N is cut to the rows it holds.
#include <algorithm>
#include <utility>
#include "HNSWIndex.h"
#include <chrono>
#include <ctime>
static double cpu(){timespec t; clock_gettime(CLOCK_PROCESS_CPUTIME_ID,&t); return t.tv_sec+t.tv_nsec*1e-9;}
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>
#include <cmath>
#include <string>
int main(int argc, char **argv) {
    size_t n = argc > 1 ? atoi(argv[1]) : 8900, dim = 64, threads = argc > 2 ? atoi(argv[2]) : 1;
    std::mt19937 rng(7);
    std::normal_distribution<float> nd;
    // clustered vectors
    std::vector<float> centers(50 * dim);
    for (auto &c : centers) c = nd(rng);
    std::string source = argc > 5 ? argv[5] : "clustered";
    bool uniform = source == "uniform", fromFile = !uniform && source != "clustered";
    std::vector<float> v;
    if (fromFile) {
        FILE *file = fopen(source.c_str(), "rb");
        if (file == nullptr) { perror(source.c_str()); return 1; }
        fseek(file, 0, SEEK_END);
        n = std::min<size_t>(n, size_t(ftell(file)) / (sizeof(float) * dim));
        fseek(file, 0, SEEK_SET);
        v.resize(n * dim);
        n = fread(v.data(), sizeof(float) * dim, n, file);
        fclose(file);
    } else {
        v.resize(n * dim);
    }
    std::uniform_real_distribution<float> ud(-1.0f, 1.0f);
    for (size_t i = 0; i < n && !fromFile; i++) {
        if (uniform) {
            double norm = 0;
            for (size_t d = 0; d < dim; d++) { v[i*dim+d] = ud(rng); norm += double(v[i*dim+d]) * v[i*dim+d]; }
            for (size_t d = 0; d < dim; d++) v[i*dim+d] = float(v[i*dim+d] / std::sqrt(norm));
            continue;
        }
        size_t c = rng() % 50; for (size_t d = 0; d < dim; d++) v[i*dim+d] = centers[c*dim+d] + 0.7f*nd(rng);
    }
    std::vector<uint64_t> labels(n);
    for (size_t i = 0; i < n; i++) labels[i] = i;
    char err[256];
    size_t efc = argc > 3 ? atoi(argv[3]) : 100; auto idx = sluice_hnsw_create(dim, 1024, 16, efc, err, sizeof err);
    auto t0 = std::chrono::steady_clock::now(); double c0 = cpu();
    // batches of 64 like upserts
    for (size_t i = 0; i < n; i += 64) {
        size_t c = std::min<size_t>(64, n - i);
        sluice_hnsw_add(idx, v.data() + i * dim, labels.data() + i, c, threads, err, sizeof err);
    }
    auto t1 = std::chrono::steady_clock::now(); double c1 = cpu();
    double s = std::chrono::duration<double>(t1 - t0).count();
    // recall@10 vs exact float cosine for 200 queries
    size_t hits = 0, q = argc > 4 ? atoi(argv[4]) : 200;
    for (size_t qi = 0; qi < q; qi++) {
        const float *x = v.data() + (qi * 37 % n) * dim;
        std::vector<std::pair<float, size_t>> all;
        double nx = 0; for (size_t d = 0; d < dim; d++) nx += x[d]*x[d];
        for (size_t j = 0; j < n; j++) { double dot = 0, ny = 0; for (size_t d = 0; d < dim; d++) { dot += x[d]*v[j*dim+d]; ny += v[j*dim+d]*v[j*dim+d]; } all.push_back({-(float)(dot/std::sqrt(nx*ny)), j}); }
        std::partial_sort(all.begin(), all.begin() + 10, all.end());
        uint64_t got[10]; float sims[10];
        size_t k = sluice_hnsw_search(idx, x, 10, 64, got, sims);
        for (size_t a = 0; a < 10; a++) for (size_t b = 0; b < k; b++) if (got[b] == all[a].second) { hits++; break; }
    }
    printf("%s n=%zu threads=%zu ef_construction=%zu: cpu %.3f s %.1f us/insert, wall %.3f s", source.c_str(), n, threads, efc, c1 - c0,
           (c1 - c0) / n * 1e6, s);
    if (q > 0) printf(", recall@10 %.4f", hits / double(q * 10));
    printf("\n");
}
