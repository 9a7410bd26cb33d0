// Product quantization (DiskANN's in-memory codes) for the graph with its nodes in a file (FileGraph.cpp) and
// Benchmarks/ann/hnsw_pread.cpp's `--pq M`. Internal to CHNSW: not part of its C interface. A vector of d dimensions
// is cut into M sub-vectors of d / M, each replaced by the index of its nearest of 256 centroids (one byte),
// so a node costs M bytes in memory. The centroids are trained by k-means on a bounded sample (the same
// centroids on every CPU).
//
// Scoring (inner product of unit vectors, as the store's graph): for a query (or an inserted vector), a table
// of its dot product with every centroid of every sub-space (M × 256 floats), built once; a node's distance
// is then 1 − the sum of M table entries its code picks (asymmetric distance computation). The table is
// built from the query's 8-bit vector (the store's quantizer) and 8-bit copies of the centroids (each with
// its own scale), so its dot products are integers: the kernels (portable, AVX2, AVX-512 VNNI, chosen at run
// time as Sources/CHNSW's are) give equal results. Encoding a vector uses the same table: in each sub-space
// the centroid c maximizing x·c − |c|²/2 (the nearest in L2).
#pragma once

#include "HNSWIndex.h"
#include "Quantizer.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <vector>

namespace sluice_chnsw {

// The table's dot products (ProductQuantizer::buildTable), one kernel per instruction set: for sub-space j of
// `m` (`perSub` groups of 4 dimensions each) and centroid c, the integer dot product of the query's 8-bit values
// with the centroid's over the sub-space, then the table's float `scale × scales[j][c] × dot` at table[j][c].
// `columns` holds the 8-bit centroids by group: group g's 4 bytes of the 256 centroids side by side
// ([g][c][4]), so 16 centroids' dot products for a group are one `vpdpbusd` of the query's 4 bytes broadcast
// (session 37: the kernels summed a row's groups, centroid by centroid, then gathered them across centroids
// into the table: 7–8% of an insert's CPU at 96-byte codes). The dot products are exact integers and the float
// step the same two products in the same order, so every kernel gives the same table, bit for bit.
inline void tableDotsPortable(const int8_t *query, const int8_t *columns, size_t m, size_t perSub, const float *scales,
    float scale, float *table)
{
    constexpr size_t centroids = 256;
    for (size_t j = 0; j < m; j++) {
        for (size_t c = 0; c < centroids; c++) {
            int32_t dot = 0;
            for (size_t g = j * perSub; g < (j + 1) * perSub; g++) {
                const int8_t *column = columns + (g * centroids + c) * 4;
                for (size_t i = 0; i < 4; i++) dot += int32_t(query[4 * g + i]) * int32_t(column[i]);
            }
            table[j * centroids + c] = scale * scales[j * centroids + c] * float(dot);
        }
    }
}

#if defined(__x86_64__)
// 8 centroids a register: `vpmaddubsw` (|q| × column with q's sign, adjacent pairs into 16 bits: at most 2 × 127
// × 127, no saturation), then `vpmaddwd` by ones (each 32-bit lane a centroid's sum over the group's 4 bytes).
__attribute__((target("avx2"))) inline void tableDotsAVX2(const int8_t *query, const int8_t *columns, size_t m,
    size_t perSub, const float *scales, float scale, float *table)
{
    constexpr size_t centroids = 256;
    const __m256i ones = _mm256_set1_epi16(1);
    const __m256 scaleBy = _mm256_set1_ps(scale);
    for (size_t j = 0; j < m; j++) {
        for (size_t first = 0; first < centroids; first += 8) {
            __m256i dots = _mm256_setzero_si256();
            for (size_t g = j * perSub; g < (j + 1) * perSub; g++) {
                int32_t four;
                std::memcpy(&four, query + 4 * g, 4);
                const __m256i q = _mm256_set1_epi32(four);
                const __m256i c =
                    _mm256_loadu_si256(reinterpret_cast<const __m256i *>(columns + (g * centroids + first) * 4));
                const __m256i pairs = _mm256_maddubs_epi16(_mm256_abs_epi8(q), _mm256_sign_epi8(c, q));
                dots = _mm256_add_epi32(dots, _mm256_madd_epi16(pairs, ones));
            }
            const __m256 scaled = _mm256_mul_ps(scaleBy, _mm256_loadu_ps(scales + j * centroids + first));
            _mm256_storeu_ps(table + j * centroids + first, _mm256_mul_ps(scaled, _mm256_cvtepi32_ps(dots)));
        }
    }
}

// 16 centroids a register: VNNI's `vpdpbusd` of |q| with the column given q's sign (no saturation: the
// non-saturating form, and at most 4 × 127 × 127 a group).
__attribute__((target("avx512f,avx512bw,avx512vnni"))) inline void tableDotsVNNI(const int8_t *query,
    const int8_t *columns, size_t m, size_t perSub, const float *scales, float scale, float *table)
{
    constexpr size_t centroids = 256;
    const __m512i zero = _mm512_setzero_si512();
    const __m512 scaleBy = _mm512_set1_ps(scale);
    for (size_t j = 0; j < m; j++) {
        for (size_t first = 0; first < centroids; first += 16) {
            __m512i dots = zero;
            for (size_t g = j * perSub; g < (j + 1) * perSub; g++) {
                int32_t four;
                std::memcpy(&four, query + 4 * g, 4);
                const __m512i q = _mm512_set1_epi32(four);
                const __m512i c = _mm512_loadu_si512(columns + (g * centroids + first) * 4);
                const __m512i signedC = _mm512_mask_sub_epi8(c, _mm512_movepi8_mask(q), zero, c);
                dots = _mm512_dpbusd_epi32(dots, _mm512_abs_epi8(q), signedC);
            }
            const __m512 scaled = _mm512_mul_ps(scaleBy, _mm512_loadu_ps(scales + j * centroids + first));
            _mm512_storeu_ps(table + j * centroids + first, _mm512_mul_ps(scaled, _mm512_cvtepi32_ps(dots)));
        }
    }
}
#endif

using TableDots = void (*)(const int8_t *, const int8_t *, size_t, size_t, const float *, float, float *);

// The table kernel for `kernel` (a `SluiceHNSWKernel`: Sources/CHNSW's chosen distance kernel, which
// SLUICE_HNSW_VECTOR_WIDTH lowers); the caller knows this CPU runs it.
inline TableDots tableDotsKernel(int kernel)
{
#if defined(__x86_64__)
    if (kernel == SLUICE_HNSW_KERNEL_AVX512_VNNI) return tableDotsVNNI;
    if (kernel == SLUICE_HNSW_KERNEL_AVX2) return tableDotsAVX2;
#endif
    (void)kernel;
    return tableDotsPortable;
}

struct ProductQuantizer {
    size_t dimensions = 0, m = 0, sub = 0;
    static constexpr size_t centroidCount = 256;
    std::vector<float> centroids;     // [j][c][sub], floats (training, decoding)
    std::vector<int8_t> columns;      // [g][c][4]: group g's 4 dimensions of centroid c (its sub-space's), 8-bit
    std::vector<float> scales;        // [j][c]: the scale of centroid c of sub-space j in `rows`
    std::vector<float> halfNorms;     // [j][c]: |centroid|² / 2, from the 8-bit copy
    TableDots kernel = tableDotsPortable;

    size_t tableFloats() const { return m * centroidCount; }
    // Fixed bytes in memory (not a node's): the float and 8-bit centroids, scales and norms.
    size_t fixedBytes() const
    {
        return centroids.size() * 4 + columns.size() + scales.size() * 4 + halfNorms.size() * 4;
    }

    // k-means in each sub-space over the `count` vectors at `sample` (d floats each), `iterations` rounds of
    // Lloyd's algorithm from centroids drawn at random (seeded); an empty cluster takes a random vector.
    void train(const float *sample, size_t count, size_t dims, size_t subspaces, size_t iterations, uint64_t seed)
    {
        trainBy(
            [&](size_t v, size_t from, size_t length, float *out) {
                std::memcpy(out, sample + v * dims + from, length * 4);
            },
            count, dims, subspaces, iterations, seed);
    }

    // The same from `count` of the store's 8-bit vectors (Quantizer.h: a float scale, then d signed bytes), one
    // every `stride` bytes from `codes`: each value times its scale, so only a sub-space at a time is ever held
    // as floats.
    void trainFromCodes(
        const uint8_t *codes, size_t count, size_t stride, size_t dims, size_t subspaces, size_t iterations,
        uint64_t seed)
    {
        trainBy(
            [&](size_t v, size_t from, size_t length, float *out) {
                const uint8_t *code = codes + v * stride;
                float scale;
                std::memcpy(&scale, code, 4);
                const int8_t *values = reinterpret_cast<const int8_t *>(code + scaleBytes);
                for (size_t i = 0; i < length; i++) out[i] = scale * float(values[from + i]);
            },
            count, dims, subspaces, iterations, seed);
    }

    // k-means with the sample given by `fill(v, from, length, out)`: components from...from+length of vector v.
    void trainBy(
        const std::function<void(size_t, size_t, size_t, float *)> &fill, size_t count, size_t dims,
        size_t subspaces, size_t iterations, uint64_t seed)
    {
        dimensions = dims;
        m = subspaces;
        sub = dims / m;
        centroids.assign(m * centroidCount * sub, 0);
        uint64_t random = seed;
        auto next = [&random]() {  // SplitMix64, as Sources/SluiceTesting/SplitMix64.swift
            random += 0x9E3779B97F4A7C15ull;
            uint64_t z = random;
            z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
            z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
            return z ^ (z >> 31);
        };
        std::vector<uint32_t> assigned(count);
        std::vector<float> sums(centroidCount * sub);
        std::vector<size_t> sizes(centroidCount);
        std::vector<float> norms(centroidCount);
        std::vector<float> xs(count * sub);  // the sample's sub-vectors of this sub-space
        std::vector<float> transposed(sub * centroidCount);
        for (size_t j = 0; j < m; j++) {
            for (size_t v = 0; v < count; v++) fill(v, j * sub, sub, &xs[v * sub]);
            float *mine = &centroids[j * centroidCount * sub];
            for (size_t c = 0; c < centroidCount; c++)
                std::memcpy(mine + c * sub, &xs[(next() % count) * sub], sub * 4);
            for (size_t round = 0; round < iterations; round++) {
                for (size_t c = 0; c < centroidCount; c++) {
                    float norm = 0;
                    for (size_t i = 0; i < sub; i++) norm += mine[c * sub + i] * mine[c * sub + i];
                    norms[c] = norm;
                    for (size_t i = 0; i < sub; i++) transposed[i * centroidCount + c] = mine[c * sub + i];
                }
                for (size_t v = 0; v < count; v++) assigned[v] = uint32_t(nearest(&xs[v * sub], transposed, norms));
                std::fill(sums.begin(), sums.end(), 0.0f);
                std::fill(sizes.begin(), sizes.end(), 0);
                for (size_t v = 0; v < count; v++) {
                    const float *x = &xs[v * sub];
                    float *to = &sums[assigned[v] * sub];
                    for (size_t i = 0; i < sub; i++) to[i] += x[i];
                    sizes[assigned[v]]++;
                }
                for (size_t c = 0; c < centroidCount; c++) {
                    if (sizes[c] == 0) {
                        std::memcpy(mine + c * sub, &xs[(next() % count) * sub], sub * 4);
                        continue;
                    }
                    for (size_t i = 0; i < sub; i++) mine[c * sub + i] = sums[c * sub + i] / float(sizes[c]);
                }
            }
        }
        derive();
    }

    // The centroid nearest `x` (`sub` floats) in L2: the least |c|² − 2 x·c, the first of equals. The dot products
    // are taken 16 centroids at a time in registers (`transposed` is [i][c]), each summed component after
    // component from 0 as one centroid's own loop would; the least is kept for each of the 16 lanes (its
    // first), then the least of the lanes is taken, the lowest centroid of equals: the centroid-by-centroid
    // loop's choice (a NaN score never chosen, centroid 0 if none is below infinity). An AVX2 clone where the
    // CPU has it runs the same operations in the same order (contraction into FMA off): the same centroids on
    // every CPU. The training at 4,096 × 384 d: 0.73 → 0.29 CPU-s (0.52 without AVX2; session 35).
#if defined(__x86_64__)
    __attribute__((target_clones("avx2", "default")))
#endif
    size_t nearest(const float *x, const std::vector<float> &transposed, const std::vector<float> &norms) const
    {
#pragma clang fp contract(off)
        constexpr size_t block = 16;
        static_assert(centroidCount % block == 0, "whole blocks");
        float laneScore[block];
        uint32_t laneBest[block] = {};
        std::fill(laneScore, laneScore + block, INFINITY);
        for (size_t first = 0; first < centroidCount; first += block) {
            float dots[block] = {};
            for (size_t i = 0; i < sub; i++) {
                const float xi = x[i];
                const float *column = &transposed[i * centroidCount + first];
                for (size_t c = 0; c < block; c++) dots[c] += xi * column[c];
            }
            for (size_t c = 0; c < block; c++) {
                const float score = norms[first + c] - 2 * dots[c];
                const bool better = score < laneScore[c];
                laneScore[c] = better ? score : laneScore[c];
                laneBest[c] = better ? uint32_t(first + c) : laneBest[c];
            }
        }
        float bestScore = laneScore[0];
        uint32_t best = laneBest[0];
        for (size_t c = 1; c < block; c++) {
            if (laneScore[c] < bestScore || (laneScore[c] == bestScore && laneBest[c] < best)) {
                bestScore = laneScore[c];
                best = laneBest[c];
            }
        }
        return best;
    }

    // The 8-bit copies, scales and half norms from the float centroids, and the kernel (after training or
    // after loading the centroids).
    void derive()
    {
        // The 8-bit copies: each centroid's largest component maps to ±127.
        columns.assign(centroidCount * dimensions, 0);
        scales.assign(m * centroidCount, 0);
        halfNorms.assign(m * centroidCount, 0);
        for (size_t j = 0; j < m; j++) {
            for (size_t c = 0; c < centroidCount; c++) {
                const float *y = &centroids[(j * centroidCount + c) * sub];
                float largest = 0;
                for (size_t i = 0; i < sub; i++) largest = std::max(largest, std::fabs(y[i]));
                const float scale = largest > 0 ? largest / 127.0f : 0.0f;
                scales[j * centroidCount + c] = scale;
                int32_t norm = 0;
                for (size_t i = 0; i < sub; i++) {
                    float level = scale > 0 ? std::nearbyint(y[i] / scale) : 0.0f;
                    int8_t value = int8_t(std::max(-127.0f, std::min(127.0f, level)));
                    const size_t at = j * sub + i;  // the dimension: group at / 4, byte at % 4
                    columns[((at / 4) * centroidCount + c) * 4 + at % 4] = value;
                    norm += int32_t(value) * int32_t(value);
                }
                halfNorms[j * centroidCount + c] = 0.5f * scale * scale * float(norm);
            }
        }
        kernel = tableDotsKernel(sluice_hnsw_distance_kernel());
    }

    // The dot products of `code` (the store's 8-bit vector: a scale, then d signed bytes) with every centroid
    // into `table` ([j][c], tableFloats()).
    void buildTable(const char *code, float *table) const
    {
        float scale;
        std::memcpy(&scale, code, 4);
        kernel(reinterpret_cast<const int8_t *>(code + 4), columns.data(), m, sub / 4, scales.data(), scale, table);
    }

    // The code of the vector whose table (buildTable) is `table`: in each sub-space the nearest centroid.
    void encode(const float *table, uint8_t *out) const
    {
        for (size_t j = 0; j < m; j++) {
            float bestScore = -INFINITY;
            size_t best = 0;
            for (size_t c = 0; c < centroidCount; c++) {
                float score = table[j * centroidCount + c] - halfNorms[j * centroidCount + c];
                if (score > bestScore) {
                    bestScore = score;
                    best = c;
                }
            }
            out[j] = uint8_t(best);
        }
    }

    // 1 − the approximate dot product of the table's vector with the vector coded `code` (in order of j:
    // the same sum on every CPU).
    float distance(const float *table, const uint8_t *code) const
    {
        float dot = 0;
        for (size_t j = 0; j < m; j++) dot += table[j * centroidCount + code[j]];
        return 1.0f - dot;
    }

    // The vector coded `code`, rebuilt from the float centroids, into `out` as the store's 8-bit vector.
    void decode(const uint8_t *code, uint8_t *out, std::vector<float> &scratch) const
    {
        scratch.resize(dimensions);
        for (size_t j = 0; j < m; j++)
            std::memcpy(&scratch[j * sub], &centroids[(j * centroidCount + code[j]) * sub], sub * 4);
        quantize(scratch.data(), dimensions, out);
    }
};

}  // namespace sluice_chnsw
