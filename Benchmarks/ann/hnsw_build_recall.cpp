// The store's graph (this tree's Sources/CHNSW/HNSWIndex.cpp, through its C interface: the 8-bit space and
// kernels, M 16) built from real vectors at several `ef_construction`s (issue 33 goal 1, session 34): for
// each, the inserts' CPU a vector (batches of 256, as the store's build) and recall@10 at several `ef_search`
// breadths, the store's way (k + max(k, 8) = 20 candidates re-ranked by their float vectors) against an exact
// float scan. With --npy the last --queries rows of the .npy file are the queries (held out: never
// inserted); with --vectors N, the clustered 384-d vectors of `sluice-bench local-search` (the generator of
// `ClusteredVectors`, its seed, N / 100 clusters, spread 1.0) and the --queries vectors that follow them.
//   clang++ -std=c++17 -O2 -ffp-contract=off -pthread -I Sources/CHNSW/include \
//       -o /tmp/hnsw_build_recall Benchmarks/ann/hnsw_build_recall.cpp
//   /tmp/hnsw_build_recall --npy /tmp/pq-work/docs.npy --ef-construction 100,64,48 --ef 32,64,128 [--threads 1]
//   /tmp/hnsw_build_recall --vectors 1000000 --ef-construction 64,100 --ef 64,128 --threads 2
#include "../../Sources/CHNSW/HNSWIndex.cpp"
#include "ann_bench.h"

#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

static std::vector<size_t> numbers(const std::string &list)
{
    std::vector<size_t> out;
    std::stringstream stream(list);
    std::string item;
    while (std::getline(stream, item, ',')) out.push_back(std::stoul(item));
    return out;
}

int main(int argc, char **argv)
{
    std::string npyPath;
    size_t queryCount = 200, threads = 1, m = 16, k = 10, generated = 0;
    std::vector<size_t> efConstructions{100, 64}, breadths{32, 64, 128};
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        auto value = [&]() { return bench::optionValue(argc, argv, i); };
        if (a == "--npy") npyPath = value();
        else if (a == "--vectors") generated = std::stoul(value());
        else if (a == "--queries") queryCount = std::stoul(value());
        else if (a == "--threads") threads = std::stoul(value());
        else if (a == "--m") m = std::stoul(value());
        else if (a == "--ef-construction") efConstructions = numbers(value());
        else if (a == "--ef") breadths = numbers(value());
        else {
            std::fprintf(stderr, "unknown option %s\n", a.c_str());
            return 2;
        }
    }
    size_t rows = 0, dimensions = 0;
    std::vector<float> all;
    if (generated > 0) {
        rows = generated + queryCount;
        dimensions = 384;
        all.resize(rows * dimensions);
        bench::Clustered generator(dimensions, std::max<size_t>(10, generated / 100), 1.0f, 0x10CA15EA);
        for (size_t i = 0; i < rows; i++) (void)generator.next(&all[i * dimensions]);
        npyPath = "clustered";
    } else if (npyPath.empty() || !bench::readNpy(npyPath, rows, dimensions, all) || rows <= queryCount) {
        return 2;
    }
    const size_t n = rows - queryCount;
    std::vector<float> queries(all.begin() + n * dimensions, all.end());
    // The floats in a file, read back with pread as the store reads LMDB (the re-rank's input).
    FILE *floats = std::tmpfile();
    std::fwrite(all.data(), sizeof(float), n * dimensions, floats);
    std::fflush(floats);
    const int floatsFD = fileno(floats);
    const auto truth = bench::exactBest(floatsFD, n, dimensions, queries, k);
    std::printf("%zu vectors x %zu dimensions (%s), %zu held-out queries, M %zu, %zu insert thread(s)\n", n,
        dimensions, npyPath.c_str(), queryCount, m, threads);
    std::vector<uint64_t> labels(n);
    for (size_t i = 0; i < n; i++) labels[i] = i;
    for (size_t efc : efConstructions) {
        char error[256] = {0};
        SluiceHNSW *index = sluice_hnsw_create(dimensions, n + n / 8, m, efc, error, sizeof error);
        if (index == nullptr) {
            std::fprintf(stderr, "%s\n", error);
            return 1;
        }
        const double before = bench::processCPU();
        for (size_t first = 0; first < n; first += 256) {
            size_t count = std::min<size_t>(256, n - first);
            if (!sluice_hnsw_add(index, &all[first * dimensions], &labels[first], count, threads, error, sizeof error)) {
                std::fprintf(stderr, "%s\n", error);
                return 1;
            }
        }
        const double cpu = bench::processCPU() - before;
        std::printf("ef_construction %zu: inserts %.3f CPU-s, %.1f us a vector", efc, cpu, cpu / n * 1e6);
        for (size_t breadth : breadths) {
            const size_t wanted = k + std::max<size_t>(k, 8);
            std::vector<uint64_t> found(wanted);
            std::vector<float> similarities(wanted);
            size_t hits = 0;
            for (size_t q = 0; q < queryCount; q++) {
                size_t got = sluice_hnsw_search(
                    index, &queries[q * dimensions], wanted, breadth, found.data(), similarities.data());
                std::vector<size_t> candidates(found.begin(), found.begin() + got);
                hits += bench::rerankedHits(floatsFD, &queries[q * dimensions], dimensions, candidates, truth[q], k);
            }
            std::printf("; recall@%zu at ef %zu: %.4f", k, breadth, double(hits) / double(queryCount * k));
        }
        std::printf("\n");
        sluice_hnsw_free(index);
    }
    std::fclose(floats);
    return 0;
}
