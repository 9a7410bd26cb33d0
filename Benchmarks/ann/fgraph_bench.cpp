// The store's graph with its nodes in a file (Sources/CHNSW/FileGraph.cpp, `sink.hnsw.nodes: file`) measured
// through its C interface (`sluice_fgraph_*`), as LocalANNIndex calls it: built in batches of 256 with
// --threads insert threads (1 by default), then searched one query at a time. Prints the insert CPU and reads (`pread`s counted by
// /proc/self/io's syscr) a vector, and for each ef: recall@k after the store's re-rank (the best k + max(k, 8)
// by float vectors) against an exact float scan, the search CPU p50 / p99 (the thread's) and reads a search.
//
//   clang++ -std=c++17 -O2 -ffp-contract=off -pthread -I Sources/CHNSW/include -o /tmp/fgraph_bench \
//       Benchmarks/ann/fgraph_bench.cpp Sources/CHNSW/FileGraph.cpp
//   /tmp/fgraph_bench --vectors 100000 --dir D --code-bytes 24 --ef 64,128,256     # clustered vectors
//   /tmp/fgraph_bench --vectors 30000 --clusters 10 --code-bytes 48 --codes-from 16384   # 10 tight clusters
//   /tmp/fgraph_bench --npy D/docs.npy --dir D --code-bytes 24 --codes-from 4096   # real vectors (embed_docs.py)
//
// Clustered vectors: --clusters C (default one per 100 vectors, at least 10; sluice-bench local-search's
// --clusters) around random unit centres, noise of norm --spread (1.0: cosine ~0.5 inside a cluster).
// --code-bytes 0 is the graph without codes (session 32's store graph: every scored node read). --nodes memory
// measures the store's graph in memory (hnswlib through `sluice_hnsw_*`) on the same vectors and queries instead.
// --graph PATH saves the built graph there, and a later run with the same options loads it and only searches
// (--repeats R times the queries, for a profile of searches alone).
#include "../../Sources/CHNSW/HNSWIndex.cpp"
#include "ann_bench.h"

#include <sys/stat.h>

#include <chrono>
#include <numeric>

using namespace bench;

static long readCalls()
{
    FILE *f = std::fopen("/proc/self/io", "r");
    char line[128];
    long calls = 0;
    while (f && std::fgets(line, sizeof line, f)) std::sscanf(line, "syscr: %ld", &calls);
    if (f) std::fclose(f);
    return calls;
}

static size_t rerank = 0;  // --rerank: labels re-ranked by float vectors (0: the store's k + max(k, 8))

// The graph measured: the file graph, or (--nodes memory) the store's graph in memory (hnswlib, `sluice_hnsw_*`)
// on the same vectors and queries, for a comparison of the search CPU alone.
struct Graph {
    SluiceFileGraph *file = nullptr;
    SluiceHNSW *memory = nullptr;
    size_t search(const float *query, size_t k, size_t ef, uint64_t *labels, float *similarities) const
    {
        return file ? sluice_fgraph_search(file, query, k, ef, labels, similarities)
                    : sluice_hnsw_search(memory, query, k, ef, labels, similarities);
    }
    void free()
    {
        if (file) sluice_fgraph_free(file);
        if (memory) sluice_hnsw_free(memory);
    }
};

static int searchAll(Graph graph, size_t n, size_t dimensions, size_t k, size_t queryCount, size_t repeats,
    const std::string &efs, const std::vector<float> &base, const std::vector<float> &queries,
    const std::string &npyPath);

int main(int argc, char **argv)
{
    size_t n = 100000, queryCount = 200, m = 16, efConstruction = 100, dimensions = 384, k = 10;
    size_t codeBytes = 24, codesFrom = 4096, threads = 1;
    size_t repeats = 1, clusters = 0;  // clusters 0: one per 100 vectors (at least 10)
    float spread = 1.0f;
    std::string dir = "/tmp/fgraph-bench", efs = "auto", npyPath, graphPath, nodes = "file";
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        auto value = [&]() { return optionValue(argc, argv, i); };
        if (a == "--vectors") n = std::stoul(value());
        else if (a == "--queries") queryCount = std::stoul(value());
        else if (a == "--dir") dir = value();
        else if (a == "--ef") efs = value();
        else if (a == "--code-bytes") codeBytes = std::stoul(value());
        else if (a == "--codes-from") codesFrom = std::stoul(value());
        else if (a == "--npy") npyPath = value();
        else if (a == "--graph") graphPath = value();
        else if (a == "--repeats") repeats = std::stoul(value());
        else if (a == "--nodes") nodes = value();
        else if (a == "--rerank") rerank = std::stoul(value());
        else if (a == "--clusters") clusters = std::stoul(value());
        else if (a == "--spread") spread = std::stof(value());
        else if (a == "--threads") threads = std::stoul(value());
        else {
            std::fprintf(stderr, "unknown option %s\n", argv[i]);
            return 2;
        }
    }
    std::vector<float> base, queries;
    if (!npyPath.empty()) {
        // Real vectors (float32 rows, C order): the last --queries rows are the queries, the rows before them
        // (at most --vectors) the base.
        size_t rows = 0;
        std::vector<float> all;
        if (!readNpy(npyPath, rows, dimensions, all)) return 2;
        if (rows <= queryCount) {
            std::fprintf(stderr, "%s: needs more than %zu rows\n", npyPath.c_str(), queryCount);
            return 2;
        }
        n = std::min(n, rows - queryCount);
        base.assign(all.begin(), all.begin() + ptrdiff_t(n * dimensions));
        queries.assign(all.end() - ptrdiff_t(queryCount * dimensions), all.end());
    } else {
        if (clusters == 0) clusters = std::max<size_t>(10, n / 100);
        Clustered generator(dimensions, clusters, spread, 0x10CA15EA);
        base.resize(n * dimensions);
        queries.resize(queryCount * dimensions);
        for (size_t i = 0; i < n; i++) generator.next(&base[i * dimensions]);
        for (size_t q = 0; q < queryCount; q++) generator.next(&queries[q * dimensions]);
    }
    mkdir(dir.c_str(), 0755);
    char error[256] = {0};
    struct stat saved;
    if (!graphPath.empty() && stat(graphPath.c_str(), &saved) == 0) {
        // A graph saved by an earlier run with the same options: searches only (profile them alone).
        Graph graph;
        if (nodes == "memory") graph.memory = sluice_hnsw_load(graphPath.c_str(), dimensions, error, sizeof error);
        else graph.file = sluice_fgraph_load(graphPath.c_str(), dimensions, efConstruction, error, sizeof error);
        if (graph.file == nullptr && graph.memory == nullptr) {
            std::fprintf(stderr, "load: %s\n", error);
            return 1;
        }
        return searchAll(graph, n, dimensions, k, queryCount, repeats, efs, base, queries, npyPath);
    }
    if (nodes == "memory") {
        SluiceHNSW *index = sluice_hnsw_create(dimensions, n, m, efConstruction, error, sizeof error);
        if (index == nullptr) {
            std::fprintf(stderr, "create: %s\n", error);
            return 1;
        }
        const double cpu0 = processCPU();
        const auto wall0 = std::chrono::steady_clock::now();
        std::vector<uint64_t> labels(256);
        for (size_t first = 0; first < n; first += 256) {
            const size_t count = std::min<size_t>(256, n - first);
            for (size_t i = 0; i < count; i++) labels[i] = first + i;
            if (!sluice_hnsw_add(index, &base[first * dimensions], labels.data(), count, threads, error, sizeof error)) {
                std::fprintf(stderr, "add: %s\n", error);
                return 1;
            }
        }
        std::printf("%zu vectors x %zu dimensions (%s), M %zu, ef_construction %zu, nodes in memory (hnswlib)\n", n,
            dimensions, npyPath.empty() ? "clustered" : npyPath.c_str(), m, efConstruction);
        std::printf("build: %.1f CPU-s, %.1f s wall (%zu threads), %.2f MB in memory\n", processCPU() - cpu0,
            std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count(), threads,
            sluice_hnsw_memory_bytes(index) / 1048576.0);
        if (!graphPath.empty() && !sluice_hnsw_save(index, graphPath.c_str(), error, sizeof error)) {
            std::fprintf(stderr, "save: %s\n", error);
            return 1;
        }
        Graph graph;
        graph.memory = index;
        return searchAll(graph, n, dimensions, k, queryCount, repeats, efs, base, queries, npyPath);
    }
    SluiceFileGraph *graph =
        sluice_fgraph_create(dir.c_str(), dimensions, 1024, m, efConstruction, codeBytes, codesFrom, error, sizeof error);
    if (graph == nullptr) {
        std::fprintf(stderr, "create: %s\n", error);
        return 1;
    }
    const long reads0 = readCalls();
    const double cpu0 = processCPU();
    const auto wall0 = std::chrono::steady_clock::now();
    std::vector<uint64_t> labels(256);
    for (size_t first = 0; first < n; first += 256) {
        const size_t count = std::min<size_t>(256, n - first);
        for (size_t i = 0; i < count; i++) labels[i] = first + i;
        if (!sluice_fgraph_add(graph, &base[first * dimensions], labels.data(), count, threads, error, sizeof error)) {
            std::fprintf(stderr, "add: %s\n", error);
            return 1;
        }
    }
    const double buildCPU = processCPU() - cpu0;
    const double buildWall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    const long buildReads = readCalls() - reads0;
    std::printf("%zu vectors x %zu dimensions (%s), M %zu, ef_construction %zu, code bytes %zu (trained: %zu) from %zu\n",
        n, dimensions, npyPath.empty() ? "clustered" : npyPath.c_str(), m, efConstruction, codeBytes,
        sluice_fgraph_code_bytes(graph), codesFrom);
    std::printf("build: %.1f CPU-s, %.1f s wall (%zu threads), %.1f us CPU a vector, %.1f reads a vector; %.2f MB in memory\n",
        buildCPU, buildWall, threads, buildCPU / double(n) * 1e6, double(buildReads) / double(n),
        sluice_fgraph_memory_bytes(graph) / 1048576.0);
    if (!graphPath.empty() && !sluice_fgraph_save(graph, graphPath.c_str(), error, sizeof error)) {
        std::fprintf(stderr, "save: %s\n", error);
        return 1;
    }
    Graph built;
    built.file = graph;
    return searchAll(built, n, dimensions, k, queryCount, repeats, efs, base, queries, npyPath);
}

// Searches every query at each breadth of `efs` (`repeats` times each, for a profile of searches alone) and
// prints recall, CPU and reads; frees the graph.
static int searchAll(Graph graph, size_t n, size_t dimensions, size_t k, size_t queryCount, size_t repeats,
    const std::string &efs, const std::vector<float> &base, const std::vector<float> &queries,
    const std::string &npyPath)
{
    (void)npyPath;
    // The truth: the exact top k by float inner products.
    std::vector<std::vector<uint32_t>> truth(queryCount);
    std::vector<float> kth(queryCount);
    for (size_t q = 0; q < queryCount; q++) {
        std::vector<std::pair<float, uint32_t>> scores(n);
        for (size_t i = 0; i < n; i++) scores[i] = {-dot(&queries[q * dimensions], &base[i * dimensions], dimensions), uint32_t(i)};
        std::partial_sort(scores.begin(), scores.begin() + ptrdiff_t(k), scores.end());
        kth[q] = -scores[k - 1].first;
    }
    const size_t wanted = rerank > 0 ? rerank : k + std::max<size_t>(k, 8);
    std::string list = efs;
    for (size_t at = 0; at <= list.size();) {
        size_t comma = list.find(',', at);
        if (comma == std::string::npos) comma = list.size();
        std::string item = list.substr(at, comma - at);
        at = comma + 1;
        const size_t ef = item == "auto" ? autoBreadth(n) : std::stoul(item);
        std::vector<double> times;
        double hits = 0;
        long searchReads = 0;
        std::vector<uint64_t> found(wanted);
        std::vector<float> similarities(wanted);
        for (size_t q = 0; q < queryCount * repeats; q++) {
            if (q >= queryCount) {  // repeats: time only
                const double t0 = threadCPU();
                graph.search(&queries[(q % queryCount) * dimensions], wanted, ef, found.data(), similarities.data());
                times.push_back((threadCPU() - t0) * 1000);
                continue;
            }
            const long r0 = readCalls();
            const double t0 = threadCPU();
            const size_t got =
                graph.search(&queries[q * dimensions], wanted, ef, found.data(), similarities.data());
            times.push_back((threadCPU() - t0) * 1000);
            searchReads += readCalls() - r0 - 1;  // minus readCalls' own read of /proc/self/io
            std::vector<float> scores;
            for (size_t i = 0; i < got; i++) scores.push_back(dot(&queries[q * dimensions], &base[found[i] * dimensions], dimensions));
            std::sort(scores.rbegin(), scores.rend());
            for (size_t i = 0; i < std::min(k, scores.size()); i++)
                if (scores[i] >= kth[q] - 1e-6f) hits++;
        }
        std::printf("ef %4zu: recall@%zu %.3f, search CPU ms p50 %.3f p99 %.3f (mean %.3f), %.1f reads a search\n", ef, k,
            hits / double(queryCount * k), percentile(times, 0.5), percentile(times, 0.99),
            std::accumulate(times.begin(), times.end(), 0.0) / double(times.size()), double(searchReads) / double(queryCount));
    }
    graph.free();
    return 0;
}
