// Shared by the ANN harnesses in this folder (hnsw_mapped.cpp, hnsw_pread.cpp): the clustered vectors of
// `sluice-bench local-search`, the process's memory from /proc/self/status, CPU clocks, minor faults,
// `ef_search: auto` and percentiles. Include it after Sources/CHNSW/HNSWIndex.cpp (it uses its innerProduct).
#pragma once

#include <fcntl.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace bench {

// SplitMix64, as Sources/SluiceTesting/SplitMix64.swift.
struct SplitMix64 {
    uint64_t state;
    uint64_t next()
    {
        state += 0x9E3779B97F4A7C15ull;
        uint64_t z = state;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
};

// Sources/SluiceTesting/ClusteredVectors.swift, operation for operation (built with -ffp-contract=off).
struct Clustered {
    size_t dimensions;
    float spread;
    std::vector<std::vector<float>> centres;
    SplitMix64 rng;

    Clustered(size_t dimensions, size_t clusters, float spread, uint64_t seed)
        : dimensions(dimensions), spread(spread), rng{seed}
    {
        for (size_t c = 0; c < clusters; c++) {
            std::vector<float> centre(dimensions);
            for (auto &x : centre) x = gaussian();
            normalize(centre);
            centres.push_back(std::move(centre));
        }
    }

    float gaussian()
    {
        double u1 = (double(rng.next() >> 11) + 1) / 9007199254740992.0;
        double u2 = double(rng.next() >> 11) / 9007199254740992.0;
        return float(std::sqrt(-2 * std::log(u1)) * std::cos(2 * M_PI * u2));
    }

    static void normalize(std::vector<float> &v)
    {
        float norm = 0;
        for (float x : v) norm = norm + x * x;
        norm = std::sqrt(norm);
        if (norm > 0)
            for (auto &x : v) x = x / norm;
    }

    // The next vector into `out`; returns its cluster.
    size_t next(float *out)
    {
        const size_t cluster = rng.next() % centres.size();
        const auto &centre = centres[cluster];
        float scale = spread / std::sqrt(float(dimensions));
        std::vector<float> v(dimensions);
        for (size_t i = 0; i < dimensions; i++) v[i] = centre[i] + scale * gaussian();
        normalize(v);
        std::memcpy(out, v.data(), dimensions * sizeof(float));
        return cluster;
    }
};

struct Memory {
    long hwmKB = 0, rssKB = 0, anonKB = 0, fileKB = 0;
};

Memory memory()
{
    Memory m;
    FILE *f = std::fopen("/proc/self/status", "r");
    char line[256];
    while (f && std::fgets(line, sizeof line, f)) {
        std::sscanf(line, "VmHWM: %ld", &m.hwmKB);
        std::sscanf(line, "VmRSS: %ld", &m.rssKB);
        std::sscanf(line, "RssAnon: %ld", &m.anonKB);
        std::sscanf(line, "RssFile: %ld", &m.fileKB);
    }
    if (f) std::fclose(f);
    return m;
}

// Resets VmHWM to the current RSS (Linux 4.0+).
void resetPeak()
{
    int fd = open("/proc/self/clear_refs", O_WRONLY);
    if (fd >= 0) {
        if (write(fd, "5", 1) != 1) std::perror("clear_refs");
        close(fd);
    }
}

void printMemory(const char *phase)
{
    Memory m = memory();
    std::printf("  memory %-28s VmHWM %8.1f MB  VmRSS %8.1f MB  RssAnon %8.1f MB  RssFile %8.1f MB\n", phase,
        m.hwmKB / 1024.0, m.rssKB / 1024.0, m.anonKB / 1024.0, m.fileKB / 1024.0);
}

double processCPU()
{
    timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

double threadCPU()
{
    timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

long minorFaults(int who)
{
    rusage u;
    getrusage(who, &u);
    return u.ru_minflt;
}
// `ef_search: auto` (LocalSink.IndexSettings.searchBreadth(vectors:)).
size_t autoBreadth(size_t vectors)
{
    if (vectors <= 250000) return 64;
    double grown = 64 * std::sqrt(double(vectors) / 250000.0);
    return std::min<size_t>(1024, size_t(std::ceil(grown)));
}

float dot(const float *a, const float *b, size_t n) { return innerProduct(a, b, n); }

double percentile(std::vector<double> values, double p)
{
    if (values.empty()) return 0;
    std::sort(values.begin(), values.end());
    size_t index = std::min(values.size() - 1, size_t(std::ceil(p * values.size())) - 1);
    return values[index];
}

// The value of the option argv[i] (argv[i + 1], moving i on to it), or exits naming the option.
std::string optionValue(int argc, char **argv, int &i)
{
    if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", argv[i]);
        std::exit(2);
    }
    return argv[++i];
}

// Reads `count` bytes at `offset` of `fd` into `out` with pread, or exits: the harnesses' files are their own.
void readAt(int fd, void *out, size_t count, size_t offset)
{
    char *to = static_cast<char *>(out);
    while (count > 0) {
        ssize_t got = pread(fd, to, count, off_t(offset));
        if (got <= 0) {
            std::perror("pread");
            std::exit(1);
        }
        to += got;
        offset += size_t(got);
        count -= size_t(got);
    }
}

// Writes `count` bytes of `in` at `offset` of `fd` with pwrite, or exits.
void writeAt(int fd, const void *in, size_t count, size_t offset)
{
    const char *from = static_cast<const char *>(in);
    while (count > 0) {
        ssize_t put = pwrite(fd, from, count, off_t(offset));
        if (put <= 0) {
            std::perror("pwrite");
            std::exit(1);
        }
        from += put;
        offset += size_t(put);
        count -= size_t(put);
    }
}

// Reads a .npy file of float32 rows in C order (embed_docs.py's, vectors.py's) into `data`; its shape into `rows`
// and `columns`. False, with a message on stderr, if it is not one.
bool readNpy(const std::string &path, size_t &rows, size_t &columns, std::vector<float> &data)
{
    FILE *f = std::fopen(path.c_str(), "rb");
    char magic[10];
    if (f == nullptr || std::fread(magic, 1, 10, f) != 10 || std::memcmp(magic, "\x93NUMPY", 6) != 0) {
        std::fprintf(stderr, "%s: not a .npy file\n", path.c_str());
        if (f) std::fclose(f);
        return false;
    }
    size_t headerBytes = size_t(uint8_t(magic[8])) | size_t(uint8_t(magic[9])) << 8;
    std::string header(headerBytes, ' ');
    if (std::fread(&header[0], 1, headerBytes, f) != headerBytes || header.find("'<f4'") == std::string::npos ||
        header.find("'fortran_order': False") == std::string::npos) {
        std::fprintf(stderr, "%s: needs float32 rows in C order\n", path.c_str());
        std::fclose(f);
        return false;
    }
    size_t shape = header.find("'shape': (");
    rows = std::stoul(header.substr(shape + 10));
    columns = std::stoul(header.substr(header.find(',', shape) + 1));
    data.resize(rows * columns);
    const bool whole = std::fread(data.data(), 4, data.size(), f) == data.size();
    std::fclose(f);
    if (!whole) std::fprintf(stderr, "%s: short\n", path.c_str());
    return whole;
}

// The k best inner products of each query (rows of `queries`) with the `n` float vectors of `floatsFD`,
// ascending: the truth, by an exact float scan.
std::vector<std::vector<float>> exactBest(
    int floatsFD, size_t n, size_t dimensions, const std::vector<float> &queries, size_t k)
{
    const size_t queryCount = queries.size() / dimensions;
    std::vector<std::vector<float>> best(queryCount);
    const size_t rows = 2048;
    std::vector<float> chunk(rows * dimensions);
    for (size_t first = 0; first < n; first += rows) {
        size_t count = std::min(rows, n - first);
        readAt(floatsFD, chunk.data(), count * dimensions * sizeof(float), first * dimensions * sizeof(float));
        for (size_t q = 0; q < queryCount; q++) {
            auto &mine = best[q];
            for (size_t r = 0; r < count; r++) {
                float score = dot(&queries[q * dimensions], &chunk[r * dimensions], dimensions);
                if (mine.size() == k && score <= mine[0]) continue;
                if (mine.size() == k) mine.erase(mine.begin());
                mine.insert(std::upper_bound(mine.begin(), mine.end(), score), score);
            }
        }
    }
    return best;
}

// How many of the k best of `labels`, re-ranked by their float vectors (read from `floatsFD` with pread, as
// the store reads them from LMDB), reach the exact k-th score `best[0]` (`best` ascending, from exactBest).
size_t rerankedHits(int floatsFD, const float *query, size_t dimensions, const std::vector<size_t> &labels,
    const std::vector<float> &best, size_t k)
{
    std::vector<float> candidate(dimensions), scores;
    for (size_t label : labels) {
        readAt(floatsFD, candidate.data(), dimensions * sizeof(float), label * dimensions * sizeof(float));
        scores.push_back(dot(query, candidate.data(), dimensions));
    }
    std::sort(scores.rbegin(), scores.rend());
    float kth = best.size() == k ? best[0] : -INFINITY;
    size_t hits = 0;
    for (size_t i = 0; i < std::min(k, scores.size()); i++) {
        if (scores[i] >= kth - 1e-6f) hits++;
    }
    return hits;
}

}  // namespace bench
