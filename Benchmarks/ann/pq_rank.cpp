// How well product-quantized codes (Sources/CHNSW/ProductQuantizer.h, the file graph's navigation) rank a query's
// true nearest neighbours, without a graph: every base vector is encoded, and for each query the base is ranked
// by the codes' approximate inner product (the codes' asymmetric distance, floats). Prints, for each way of
// coding, the fraction of the true top k (exact float inner products) inside the codes' top R (R = k, 64, 128,
// 256, 512): the best a beam of breadth ~R ranked by these codes could see, whatever the graph; and the codes'
// error on the true top 100 (RMS of code − exact inner product) against the gap between the exact 10th and 100th.
//
// Ways of coding (each trained by the same k-means, 10 rounds, on at most 4,096 base vectors evenly spread, as
// the file graph trains): `pq` the graph's codes; `rotated` the same after a random orthogonal rotation
// (OPQ's cheapest form); `residual C` codes of the residual from the nearest of C coarse centroids (IVF-PQ: the
// code carries the coarse id, the query's inner product with each coarse centroid is added).
//
//   clang++ -std=c++17 -O2 -ffp-contract=off -pthread -I Sources/CHNSW/include -o /tmp/pq_rank \
//       Benchmarks/ann/pq_rank.cpp Sources/CHNSW/FileGraph.cpp
//   /tmp/pq_rank --vectors 30000 --clusters 10 --code-bytes 48,96
//   /tmp/pq_rank --npy /tmp/pq-work/docs.npy --code-bytes 48
#include "../../Sources/CHNSW/HNSWIndex.cpp"
#include "../../Sources/CHNSW/ProductQuantizer.h"
#include "ann_bench.h"

#include <numeric>

using namespace bench;

namespace {

// Codes of `m` bytes for d-dimensional float vectors, trained by ProductQuantizer's k-means; distances in floats.
struct Codes {
    sluice_chnsw::ProductQuantizer pq;
    size_t d = 0, m = 0, sub = 0;

    void train(const std::vector<float> &sample, size_t count, size_t dims, size_t bytes)
    {
        d = dims;
        m = bytes;
        sub = d / m;
        pq.train(sample.data(), count, d, m, 10, 0x9E0C0DE5);
    }
    void encode(const float *x, uint8_t *out) const
    {
        for (size_t j = 0; j < m; j++) {
            float best = INFINITY;
            for (size_t c = 0; c < 256; c++) {
                const float *y = &pq.centroids[(j * 256 + c) * sub];
                float distance = 0;
                for (size_t i = 0; i < sub; i++) distance += (x[j * sub + i] - y[i]) * (x[j * sub + i] - y[i]);
                if (distance < best) best = distance, out[j] = uint8_t(c);
            }
        }
    }
    void table(const float *q, std::vector<float> &out) const
    {
        out.resize(m * 256);
        for (size_t j = 0; j < m; j++)
            for (size_t c = 0; c < 256; c++)
                out[j * 256 + c] = dot(q + j * sub, &pq.centroids[(j * 256 + c) * sub], sub);
    }
    float score(const std::vector<float> &table, const uint8_t *code) const
    {
        float sum = 0;
        for (size_t j = 0; j < m; j++) sum += table[j * 256 + code[j]];
        return sum;
    }
};

// A random orthogonal matrix (Gram–Schmidt on Gaussian rows), row-major.
std::vector<float> randomRotation(size_t d, uint64_t seed)
{
    Clustered gaussians(d, 1, 1.0f, seed);
    std::vector<double> r(d * d);
    for (auto &x : r) x = gaussians.gaussian();
    for (size_t i = 0; i < d; i++) {
        for (size_t j = 0; j < i; j++) {
            double p = 0;
            for (size_t t = 0; t < d; t++) p += r[i * d + t] * r[j * d + t];
            for (size_t t = 0; t < d; t++) r[i * d + t] -= p * r[j * d + t];
        }
        double norm = 0;
        for (size_t t = 0; t < d; t++) norm += r[i * d + t] * r[i * d + t];
        norm = std::sqrt(norm);
        for (size_t t = 0; t < d; t++) r[i * d + t] /= norm;
    }
    return std::vector<float>(r.begin(), r.end());
}

void rotate(const std::vector<float> &r, const float *x, float *out, size_t d)
{
    for (size_t i = 0; i < d; i++) out[i] = dot(&r[i * d], x, d);
}

}  // namespace

int main(int argc, char **argv)
{
    size_t n = 30000, queryCount = 200, dimensions = 384, k = 10, clusters = 0;
    float spread = 1.0f;
    std::string npyPath, byteList = "48", ways = "pq,rotated,residual16,residual256";
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        auto value = [&]() { return optionValue(argc, argv, i); };
        if (a == "--vectors") n = std::stoul(value());
        else if (a == "--queries") queryCount = std::stoul(value());
        else if (a == "--clusters") clusters = std::stoul(value());
        else if (a == "--spread") spread = std::stof(value());
        else if (a == "--code-bytes") byteList = value();
        else if (a == "--ways") ways = value();
        else if (a == "--npy") npyPath = value();
        else {
            std::fprintf(stderr, "unknown option %s\n", argv[i]);
            return 2;
        }
    }
    std::vector<float> base, queries;
    if (!npyPath.empty()) {
        size_t rows = 0;
        std::vector<float> all;
        if (!readNpy(npyPath, rows, dimensions, all)) return 2;
        n = std::min(n, rows - queryCount);
        base.assign(all.begin(), all.begin() + ptrdiff_t(n * dimensions));
        queries.assign(all.end() - ptrdiff_t(queryCount * dimensions), all.end());
    } else {
        if (clusters == 0) clusters = std::max<size_t>(10, n / 100);
        Clustered generator(dimensions, clusters, spread, 0x10CA15EA);  // fgraph_bench's vectors and queries
        base.resize(n * dimensions);
        queries.resize(queryCount * dimensions);
        for (size_t i = 0; i < n; i++) generator.next(&base[i * dimensions]);
        for (size_t q = 0; q < queryCount; q++) generator.next(&queries[q * dimensions]);
    }
    const size_t d = dimensions;
    std::printf("%zu vectors x %zu dimensions (%s), %zu queries\n", n, d,
        npyPath.empty() ? ("clustered: " + std::to_string(clusters) + " clusters, spread " + std::to_string(spread)).c_str()
                        : npyPath.c_str(),
        queryCount);
    // The truth: exact inner products, each query's order.
    std::vector<std::vector<float>> exact(queryCount, std::vector<float>(n));
    std::vector<std::vector<uint32_t>> order(queryCount);
    double within = 0;
    for (size_t q = 0; q < queryCount; q++) {
        for (size_t i = 0; i < n; i++) exact[q][i] = dot(&queries[q * d], &base[i * d], d);
        order[q].resize(n);
        std::iota(order[q].begin(), order[q].end(), 0);
        std::partial_sort(order[q].begin(), order[q].begin() + 100, order[q].end(),
            [&](uint32_t a, uint32_t b) { return exact[q][a] > exact[q][b]; });
        within += exact[q][order[q][k - 1]] - exact[q][order[q][99]];
    }
    std::printf("exact inner product: 1st %.3f, 10th %.3f, 100th %.3f (query 0); mean gap 10th - 100th %.4f\n",
        exact[0][order[0][0]], exact[0][order[0][k - 1]], exact[0][order[0][99]], within / double(queryCount));
    const size_t sampleCount = std::min<size_t>(n, 4096);
    const std::vector<size_t> depths{10, 64, 128, 256, 512};
    for (size_t at = 0; at <= byteList.size();) {
        size_t comma = byteList.find(',', at);
        if (comma == std::string::npos) comma = byteList.size();
        const size_t bytes = std::stoul(byteList.substr(at, comma - at));
        at = comma + 1;
        for (size_t wat = 0; wat <= ways.size();) {
            size_t wcomma = ways.find(',', wat);
            if (wcomma == std::string::npos) wcomma = ways.size();
            const std::string way = ways.substr(wat, wcomma - wat);
            wat = wcomma + 1;
            // The vectors coded (rotated, or residuals) and the coarse part of each inner product.
            std::vector<float> coded = base, rotation;
            std::vector<float> coarse;  // [c][d]
            std::vector<uint32_t> coarseOf(n, 0);
            size_t coarseCount = 0;
            if (way == "rotated") {
                rotation = randomRotation(d, 0x0A7A7E);
                for (size_t i = 0; i < n; i++) rotate(rotation, &base[i * d], &coded[i * d], d);
            } else if (way.rfind("residual", 0) == 0) {
                coarseCount = std::stoul(way.substr(8));
                std::vector<float> sample(sampleCount * d);
                for (size_t i = 0; i < sampleCount; i++)
                    std::memcpy(&sample[i * d], &base[(i * n / sampleCount) * d], d * 4);
                sluice_chnsw::ProductQuantizer one;  // k-means on whole vectors: one sub-space of d
                one.train(sample.data(), sampleCount, d, 1, 10, 0xC0A45E);
                coarse.assign(one.centroids.begin(), one.centroids.begin() + ptrdiff_t(coarseCount * d));
                if (coarseCount < 256) {  // k-means again with only coarseCount centroids
                    coarse.clear();
                    std::vector<float> centres(coarseCount * d);
                    for (size_t c = 0; c < coarseCount; c++)
                        std::memcpy(&centres[c * d], &sample[(c * sampleCount / coarseCount) * d], d * 4);
                    std::vector<uint32_t> assigned(sampleCount);
                    for (int round = 0; round < 10; round++) {
                        for (size_t v = 0; v < sampleCount; v++) {
                            float best = -INFINITY;
                            for (size_t c = 0; c < coarseCount; c++) {
                                float s = dot(&sample[v * d], &centres[c * d], d);
                                float norm = dot(&centres[c * d], &centres[c * d], d);
                                if (s - norm / 2 > best) best = s - norm / 2, assigned[v] = uint32_t(c);
                            }
                        }
                        std::vector<float> sums(coarseCount * d, 0);
                        std::vector<size_t> sizes(coarseCount, 0);
                        for (size_t v = 0; v < sampleCount; v++) {
                            for (size_t t = 0; t < d; t++) sums[assigned[v] * d + t] += sample[v * d + t];
                            sizes[assigned[v]]++;
                        }
                        for (size_t c = 0; c < coarseCount; c++)
                            if (sizes[c] > 0)
                                for (size_t t = 0; t < d; t++) centres[c * d + t] = sums[c * d + t] / float(sizes[c]);
                    }
                    coarse = centres;
                }
                for (size_t i = 0; i < n; i++) {
                    float best = -INFINITY;
                    for (size_t c = 0; c < coarseCount; c++) {
                        float s = dot(&base[i * d], &coarse[c * d], d) - dot(&coarse[c * d], &coarse[c * d], d) / 2;
                        if (s > best) best = s, coarseOf[i] = uint32_t(c);
                    }
                    for (size_t t = 0; t < d; t++) coded[i * d + t] = base[i * d + t] - coarse[coarseOf[i] * d + t];
                }
            }
            std::vector<float> sample(sampleCount * d);
            for (size_t i = 0; i < sampleCount; i++)
                std::memcpy(&sample[i * d], &coded[(i * n / sampleCount) * d], d * 4);
            Codes codes;
            const double cpu0 = processCPU();
            codes.train(sample, sampleCount, d, bytes);
            std::vector<uint8_t> all(n * bytes);
            for (size_t i = 0; i < n; i++) codes.encode(&coded[i * d], &all[i * bytes]);
            const double trainCPU = processCPU() - cpu0;
            std::vector<double> seen(depths.size(), 0);
            double squared = 0;
            std::vector<float> table, q(d), approx(n);
            std::vector<uint32_t> ranked(n);
            for (size_t qi = 0; qi < queryCount; qi++) {
                const float *query = &queries[qi * d];
                if (!rotation.empty()) rotate(rotation, query, q.data(), d);
                else std::memcpy(q.data(), query, d * 4);
                codes.table(q.data(), table);
                std::vector<float> coarseDots(coarseCount);
                for (size_t c = 0; c < coarseCount; c++) coarseDots[c] = dot(query, &coarse[c * d], d);
                for (size_t i = 0; i < n; i++)
                    approx[i] = codes.score(table, &all[i * bytes]) + (coarseCount ? coarseDots[coarseOf[i]] : 0.0f);
                for (size_t r = 0; r < 100; r++) {
                    const float e = approx[order[qi][r]] - exact[qi][order[qi][r]];
                    squared += e * e;
                }
                std::iota(ranked.begin(), ranked.end(), 0);
                std::partial_sort(ranked.begin(), ranked.begin() + 512, ranked.end(),
                    [&](uint32_t a, uint32_t b) { return approx[a] > approx[b]; });
                std::vector<char> inTop(n, 0);
                for (size_t r = 0; r < k; r++) inTop[order[qi][r]] = 1;
                for (size_t di = 0; di < depths.size(); di++) {
                    size_t hits = 0;
                    for (size_t r = 0; r < depths[di]; r++) hits += size_t(inTop[ranked[r]]);
                    seen[di] += double(hits) / double(k);
                }
            }
            std::printf("%3zu bytes %-12s (train + encode %.1f CPU-s): true top %zu in the codes' top", bytes,
                way.c_str(), trainCPU, k);
            for (size_t di = 0; di < depths.size(); di++)
                std::printf(" %zu: %.3f", depths[di], seen[di] / double(queryCount));
            std::printf("; RMS error on the top 100 %.4f\n", std::sqrt(squared / double(queryCount * 100)));
            std::fflush(stdout);
        }
    }
    return 0;
}
