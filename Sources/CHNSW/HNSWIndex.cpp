// See HNSWIndex.h.
//
// The graph's vectors are quantized to 8 bits (below), with this file's own distance kernels: hnswlib picks
// its kernels with compile-time macros, and this file is built for the baseline x86-64 (or arm64) target;
// the wide kernels here are chosen at run time instead.
#include "HNSWIndex.h"
#include "Guarded.h"
#include "Quantizer.h"

#include <hnswlib/hnswlib.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

// The graph holds each vector as 8-bit integers with one scale (a float, first), not as 32-bit floats:
// a unit vector's largest component maps to ±127. Inserting is bound by fetching the neighbours'
// vectors from memory (a 384-d float vector is 1.5 KB, the graph's whole working set is far larger than
// the caches), so a quarter of the bytes makes inserts and searches faster and the graph 3× smaller. The
// graph only chooses candidates: the store scores them again from the float vectors it keeps in LMDB
// (`LocalSink+ANNReader.swift`), and asks the graph for more than k so that quantization cannot push one
// of the true k out of the candidates.
using sluice_chnsw::QuantizedSpaceParameters;
using sluice_chnsw::scaleBytes;

inline float scaleOf(const void *v)
{
    float scale;
    std::memcpy(&scale, v, sizeof scale);
    return scale;
}

inline const int8_t *valuesOf(const void *v) { return static_cast<const int8_t *>(v) + scaleBytes; }

// 1 − a·b from the dot product of the 8-bit values, rounded alike in every kernel: a kernel built for a CPU
// with FMA would otherwise fuse the product and the difference into one rounding, and the kernels differ.
inline float distanceOf(const void *a, const void *b, int32_t dot)
{
#pragma clang fp contract(off)
    return 1.0f - scaleOf(a) * scaleOf(b) * float(dot);
}

// 1 − a·b for two quantized vectors in plain C++ (any CPU); the wide kernels below are chosen at run time.
float quantizedDistancePortable(const void *a, const void *b, const void *parameters)
{
    size_t n = static_cast<const QuantizedSpaceParameters *>(parameters)->dimensions;
    const int8_t *x = valuesOf(a);
    const int8_t *y = valuesOf(b);
    int32_t dot = 0;
    for (size_t i = 0; i < n; i++) {
        dot += int32_t(x[i]) * int32_t(y[i]);
    }
    return distanceOf(a, b, dot);
}

#if defined(__x86_64__)
// The dot product of the 8-bit values by VNNI's `vpdpbusd` (unsigned × signed bytes, four products summed
// into each 32-bit lane, without saturation): |x| times y with x's sign moved onto it, which is x·y term by
// term because the values lie in [-127, 127] (the quantizer never writes -128, so |x| fits a byte and -y
// does too). The tail of a row is read with masked loads, so any dimension runs in this one loop.
__attribute__((target("avx512f,avx512bw,avx512vnni"))) float quantizedDistanceVNNI(
    const void *a, const void *b, const void *parameters)
{
    size_t n = static_cast<const QuantizedSpaceParameters *>(parameters)->dimensions;
    const int8_t *x = valuesOf(a);
    const int8_t *y = valuesOf(b);
    const __m512i zero = _mm512_setzero_si512();
    __m512i sum = zero;
    for (size_t i = 0; i < n; i += 64) {
        __mmask64 live = n - i >= 64 ? ~__mmask64(0) : (__mmask64(1) << (n - i)) - 1;
        __m512i vx = _mm512_maskz_loadu_epi8(live, x + i);
        __m512i vy = _mm512_maskz_loadu_epi8(live, y + i);
        __mmask64 negative = _mm512_movepi8_mask(vx);
        __m512i signedY = _mm512_mask_sub_epi8(vy, negative, zero, vy);
        sum = _mm512_dpbusd_epi32(sum, _mm512_abs_epi8(vx), signedY);
    }
    int32_t dot = _mm512_reduce_add_epi32(sum);
    return distanceOf(a, b, dot);
}

// The same with AVX2's `vpmaddubsw`: |x| times y with x's sign, two products summed into each 16-bit lane
// (at most 2 × 127 × 127 = 32,258, so it never saturates), then widened by `vpmaddwd`.
__attribute__((target("avx2"))) float quantizedDistanceAVX2(const void *a, const void *b, const void *parameters)
{
    size_t n = static_cast<const QuantizedSpaceParameters *>(parameters)->dimensions;
    const int8_t *x = valuesOf(a);
    const int8_t *y = valuesOf(b);
    const __m256i ones = _mm256_set1_epi16(1);
    __m256i sum = _mm256_setzero_si256();
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        __m256i vx = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(x + i));
        __m256i vy = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(y + i));
        __m256i pairs = _mm256_maddubs_epi16(_mm256_abs_epi8(vx), _mm256_sign_epi8(vy, vx));
        sum = _mm256_add_epi32(sum, _mm256_madd_epi16(pairs, ones));
    }
    __m128i half = _mm_add_epi32(_mm256_castsi256_si128(sum), _mm256_extracti128_si256(sum, 1));
    half = _mm_add_epi32(half, _mm_shuffle_epi32(half, _MM_SHUFFLE(1, 0, 3, 2)));
    half = _mm_add_epi32(half, _mm_shuffle_epi32(half, _MM_SHUFFLE(2, 3, 0, 1)));
    int32_t dot = _mm_cvtsi128_si32(half);
    for (; i < n; i++) {
        dot += int32_t(x[i]) * int32_t(y[i]);
    }
    return distanceOf(a, b, dot);
}

#endif
// The kernel for `kernel` (a `SluiceHNSWKernel`), or null if this CPU cannot run it.
hnswlib::DISTFUNC<float> distanceKernel(int kernel)
{
    switch (kernel) {
    case SLUICE_HNSW_KERNEL_PORTABLE:
        return quantizedDistancePortable;
#if defined(__x86_64__)
    case SLUICE_HNSW_KERNEL_AVX2:
        return __builtin_cpu_supports("avx2") ? quantizedDistanceAVX2 : nullptr;
    case SLUICE_HNSW_KERNEL_AVX512_VNNI:
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                __builtin_cpu_supports("avx512vnni")
            ? quantizedDistanceVNNI
            : nullptr;
#endif
    default:
        return nullptr;
    }
}

// The widest kernel this CPU runs, lowered by `SLUICE_HNSW_VECTOR_WIDTH=avx2|baseline` (to measure on a
// wide CPU what a narrower one runs, as `SLUICE_MINILM_VECTOR_WIDTH` does for the embedder's kernels).
int chosenKernel()
{
    const char *cap = std::getenv("SLUICE_HNSW_VECTOR_WIDTH");
    int ceiling = SLUICE_HNSW_KERNEL_AVX512_VNNI;
    if (cap != nullptr && std::strcmp(cap, "avx2") == 0) ceiling = SLUICE_HNSW_KERNEL_AVX2;
    if (cap != nullptr && std::strcmp(cap, "baseline") == 0) ceiling = SLUICE_HNSW_KERNEL_PORTABLE;
    for (int kernel = ceiling; kernel > SLUICE_HNSW_KERNEL_PORTABLE; kernel--) {
        if (distanceKernel(kernel) != nullptr) return kernel;
    }
    return SLUICE_HNSW_KERNEL_PORTABLE;
}

// hnswlib's space for the quantized vectors: a scale and `dimensions` signed bytes per element.
class QuantizedInnerProductSpace : public hnswlib::SpaceInterface<float> {
  public:
    explicit QuantizedInnerProductSpace(size_t dimensions) : parameters_{dimensions}
    {
        distance_ = distanceKernel(chosenKernel());
    }
    size_t get_data_size() override { return scaleBytes + parameters_.dimensions; }
    hnswlib::DISTFUNC<float> get_dist_func() override { return distance_; }
    void *get_dist_func_param() override { return &parameters_; }

  private:
    QuantizedSpaceParameters parameters_;
    hnswlib::DISTFUNC<float> distance_;
};

}  // namespace

struct SluiceHNSW {
    size_t dimensions;
    std::unique_ptr<QuantizedInnerProductSpace> space;
    std::unique_ptr<hnswlib::HierarchicalNSW<float>> graph;
    std::shared_mutex lock;
};

using sluice_chnsw::fail;
using sluice_chnsw::guarded;

// `vector` L2-normalized and quantized into `out` (the space's element: a scale, then one signed byte a
// dimension). The largest component maps to ±127; a zero vector to all zeros.
static void quantized(const float *vector, size_t dimensions, uint8_t *out);

void sluice_chnsw::quantize(const float *vector, size_t dimensions, uint8_t *out) { quantized(vector, dimensions, out); }

sluice_chnsw::Distance sluice_chnsw::chosenDistance() { return distanceKernel(chosenKernel()); }

// The largest |vector[i] · norm| and the levels, four at a time with SSE2 (x86-64's baseline) where there is
// one: the same products and quotients as the scalar loops, the same maximum (a NaN is passed over, as
// std::max passes it), levels clamped then rounded by cvtps2dq in the default rounding mode (nearbyint's) —
// the same bytes, 2-3x faster (the file graph decodes ~24 codes an insert through this: session 34).
static void quantized(const float *vector, size_t dimensions, uint8_t *out)
{
    double sum = 0;
    for (size_t i = 0; i < dimensions; i++) {
        sum += double(vector[i]) * double(vector[i]);
    }
    float norm = sum > 0 ? float(1.0 / std::sqrt(sum)) : 0.0f;
    float largest = 0;
    size_t i = 0;
#if defined(__SSE2__)
    const __m128 norms = _mm_set1_ps(norm), magnitude = _mm_castsi128_ps(_mm_set1_epi32(0x7FFFFFFF));
    __m128 widest = _mm_setzero_ps();
    for (; i + 4 <= dimensions; i += 4) {
        // maxps returns its second operand when either is NaN: the running maximum, as std::max does.
        widest = _mm_max_ps(_mm_and_ps(_mm_mul_ps(_mm_loadu_ps(vector + i), norms), magnitude), widest);
    }
    float lanes[4];
    _mm_storeu_ps(lanes, widest);
    for (float lane : lanes) largest = std::max(largest, lane);
#endif
    for (; i < dimensions; i++) {
        largest = std::max(largest, std::fabs(vector[i] * norm));
    }
    float scale = largest > 0 ? largest / 127.0f : 0.0f;
    std::memcpy(out, &scale, sizeof scale);
    int8_t *values = reinterpret_cast<int8_t *>(out + scaleBytes);
    if (!(scale > 0)) {
        std::memset(values, 0, dimensions);
        return;
    }
    i = 0;
#if defined(__SSE2__)
    const __m128 scales = _mm_set1_ps(scale), low = _mm_set1_ps(-127.0f), high = _mm_set1_ps(127.0f);
    for (; i + 16 <= dimensions; i += 16) {
        __m128i levels[4];
        for (size_t k = 0; k < 4; k++) {
            __m128 level = _mm_div_ps(_mm_mul_ps(_mm_loadu_ps(vector + i + 4 * k), norms), scales);
            level = _mm_max_ps(_mm_min_ps(level, high), low);  // a NaN becomes 127, as in the loop below
            levels[k] = _mm_cvtps_epi32(level);
        }
        const __m128i bytes =
            _mm_packs_epi16(_mm_packs_epi32(levels[0], levels[1]), _mm_packs_epi32(levels[2], levels[3]));
        _mm_storeu_si128(reinterpret_cast<__m128i *>(values + i), bytes);
    }
#endif
    for (; i < dimensions; i++) {
        float level = std::nearbyint(vector[i] * norm / scale);
        values[i] = int8_t(std::max(-127.0f, std::min(127.0f, level)));
    }
}

// The capacity after growing from `current` slots to hold at least `needed` elements: by an eighth (at
// least 1,024 slots), not by doubling. hnswlib keeps about 46 resident bytes for every reserved slot (a
// 40-byte `std::mutex`, its level, a visited-list entry per searching thread) whether it is used or not, so
// doubling left up to half of them idle (262,144 slots for 135,108 vectors on the 10x benchmark corpus:
// 5.8 MB); an eighth bounds the
// idle ones at 1/9 of the capacity. The element array's unused tail is never touched (it is mapped on its
// own and grown with `mremap`), so it is not resident either way. A resize costs about 50 bytes of writes a
// slot, so growing by an eighth costs about 9x the final capacity's in all: microseconds a thousand vectors.
static size_t grownCapacity(size_t current, size_t needed)
{
    return std::max(needed, current + std::max<size_t>(current / 8, 1024));
}

SluiceHNSW *sluice_hnsw_create(
    size_t dimensions, size_t capacity, size_t m, size_t ef_construction, char *error, size_t error_size)
{
    return guarded(error, error_size, static_cast<SluiceHNSW *>(nullptr), [&]() {
        auto index = std::make_unique<SluiceHNSW>();
        index->dimensions = dimensions;
        index->space = std::make_unique<QuantizedInnerProductSpace>(dimensions);
        index->graph = std::make_unique<hnswlib::HierarchicalNSW<float>>(
            index->space.get(), std::max<size_t>(capacity, 16), m, ef_construction);
        index->graph->setEf(1);  // each search passes its own breadth (sluice_hnsw_search)
        return index.release();
    });
}

SluiceHNSW *sluice_hnsw_load(const char *path, size_t dimensions, char *error, size_t error_size)
{
    return guarded(error, error_size, static_cast<SluiceHNSW *>(nullptr), [&]() -> SluiceHNSW * {
        auto index = std::make_unique<SluiceHNSW>();
        index->dimensions = dimensions;
        index->space = std::make_unique<QuantizedInnerProductSpace>(dimensions);
        index->graph = std::make_unique<hnswlib::HierarchicalNSW<float>>(index->space.get(), std::string(path));
        auto &graph = *index->graph;
        // The file does not record the dimension: its element size must be this dimension's.
        // A graph saved before vectors were quantized (floats) fails here too, and is rebuilt.
        if (graph.size_data_per_element_ != graph.size_links_level0_ + scaleBytes + dimensions +
                sizeof(hnswlib::labeltype)) {
            fail(error, error_size, "the index file was made for another dimension or element format");
            return nullptr;
        }
        // hnswlib 0.6.2's loading constructor leaves the deleted count uninitialized before adding to it.
        graph.num_deleted_ = 0;
        for (size_t i = 0; i < graph.cur_element_count; i++) {
            if (graph.isMarkedDeleted(i)) {
                graph.num_deleted_ += 1;
            }
        }
        graph.setEf(1);  // each search passes its own breadth (sluice_hnsw_search)
        return index.release();
    });
}

void sluice_hnsw_free(SluiceHNSW *index) { delete index; }

int sluice_hnsw_save(SluiceHNSW *index, const char *path, char *error, size_t error_size)
{
    return guarded(error, error_size, 0, [&]() {
        std::shared_lock<std::shared_mutex> guard(index->lock);
        index->graph->saveIndex(std::string(path));
        return 1;
    });
}

int sluice_hnsw_add(
    SluiceHNSW *index, const float *vectors, const uint64_t *labels, size_t count, size_t threads, char *error,
    size_t error_size)
{
    return guarded(error, error_size, 0, [&]() {
        std::unique_lock<std::shared_mutex> guard(index->lock);
        auto &graph = *index->graph;
        size_t added = 0;
        for (size_t i = 0; i < count; i++) {
            if (graph.label_lookup_.find(labels[i]) == graph.label_lookup_.end()) {
                added++;
            }
        }
        if (graph.cur_element_count + added > graph.max_elements_) {
            graph.resizeIndex(grownCapacity(graph.max_elements_, graph.cur_element_count + added));
        }
        const size_t dimensions = index->dimensions;
        std::atomic<size_t> next{0};
        std::atomic<bool> failed{false};
        std::string message;
        std::mutex message_lock;
        auto work = [&]() {
            std::vector<uint8_t> row(scaleBytes + dimensions);
            for (size_t i = next++; i < count && !failed; i = next++) {
                try {
                    quantized(vectors + i * dimensions, dimensions, row.data());
                    graph.addPoint(row.data(), labels[i]);
                } catch (const std::exception &exception) {
                    std::lock_guard<std::mutex> hold(message_lock);
                    message = exception.what();
                    failed = true;
                }
            }
        };
        size_t workers = std::max<size_t>(1, std::min(threads, count / 64 + 1));
        std::vector<std::thread> pool;
        for (size_t t = 1; t < workers; t++) {
            pool.emplace_back(work);
        }
        work();
        for (auto &thread : pool) {
            thread.join();
        }
        if (failed) {
            fail(error, error_size, message.c_str());
            return 0;
        }
        return 1;
    });
}

int sluice_hnsw_mark_deleted(SluiceHNSW *index, uint64_t label)
{
    std::unique_lock<std::shared_mutex> guard(index->lock);
    auto &graph = *index->graph;
    auto found = graph.label_lookup_.find(label);
    if (found == graph.label_lookup_.end() || graph.isMarkedDeleted(found->second)) {
        return 0;
    }
    graph.markDeletedInternal(found->second);
    return 1;
}

size_t sluice_hnsw_search(
    SluiceHNSW *index, const float *query, size_t k, size_t ef, uint64_t *labels, float *similarities)
{
    try {
        std::vector<uint8_t> row(scaleBytes + index->dimensions);
        quantized(query, index->dimensions, row.data());
        std::shared_lock<std::shared_mutex> guard(index->lock);
        // hnswlib 0.6.2 searches with max(ef_, k) candidates and returns the best k of them: the graph's own
        // ef_ stays at its minimum (1, set at creation and load), and a search asks for max(ef, k) results and
        // keeps the best k, which is the same search with a breadth of its own.
        auto found = index->graph->searchKnn(row.data(), std::max(ef, k));
        while (found.size() > k) found.pop();  // the farthest are on top
        size_t count = found.size();
        for (size_t i = count; i > 0; i--) {
            labels[i - 1] = found.top().second;
            similarities[i - 1] = 1.0f - found.top().first;
            found.pop();
        }
        return count;
    } catch (...) {
        return 0;
    }
}

// The dot product of a float vector and a code's 8-bit values, for the bounds below. Four (AVX2: sixteen) partial
// sums: a single running sum would wait on each addition.
static float floatCodeDotPortable(const float *q, const int8_t *v, size_t n)
{
    float sums[4] = {0, 0, 0, 0};
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        for (size_t lane = 0; lane < 4; lane++) sums[lane] += q[i + lane] * float(v[i + lane]);
    }
    for (; i < n; i++) sums[0] += q[i] * float(v[i]);
    return (sums[0] + sums[1]) + (sums[2] + sums[3]);
}

#if defined(__x86_64__)
__attribute__((target("avx2,fma"))) static float floatCodeDotAVX2(const float *q, const int8_t *v, size_t n)
{
    __m256 low = _mm256_setzero_ps(), high = _mm256_setzero_ps();
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i *>(v + i));
        low = _mm256_fmadd_ps(_mm256_loadu_ps(q + i), _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(bytes)), low);
        high = _mm256_fmadd_ps(
            _mm256_loadu_ps(q + i + 8), _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(bytes, 8))), high);
    }
    float lanes[8];
    _mm256_storeu_ps(lanes, _mm256_add_ps(low, high));
    float dot = ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) + ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
    for (; i < n; i++) dot += q[i] * float(v[i]);
    return dot;
}
#endif

// An upper bound on a label's cosine to the normalized float query `q` from its code: the code's values are its
// normalized vector's divided by the scale and rounded to the nearest, so each differs from scale × value by at
// most scale / 2 and the code's vector lies within scale × √d / 2 (`h` × scale) of the true one; with |q| = 1,
// Cauchy-Schwarz bounds q·b − q·b̂ by that. The float products and sums on both sides (here, and the store's
// cosine of the stored floats) add far less than `slack`. A code of scale 0 (a zero vector) bounds nothing: 2,
// above any cosine, so that it is read.
static float cosineBound(const float *q, const uint8_t *code, size_t dimensions, float h, float slack,
    float (*dot)(const float *, const int8_t *, size_t))
{
    float scale;
    std::memcpy(&scale, code, sizeof scale);
    if (!(scale > 0)) return 2.0f;
    const int8_t *values = reinterpret_cast<const int8_t *>(code + scaleBytes);
    return dot(q, values, dimensions) * scale + h * scale + slack;
}

size_t sluice_hnsw_bounds(SluiceHNSW *index, const float *query, size_t capacity, const uint32_t *label_values,
    size_t label_count, const uint8_t *value_allowed, size_t value_count, uint64_t *labels, float *bounds)
{
    try {
        const size_t d = index->dimensions;
        std::vector<float> q(d);
        double sum = 0;
        for (size_t i = 0; i < d; i++) sum += double(query[i]) * double(query[i]);
        if (!(sum > 0)) return 0;
        const float norm = float(1.0 / std::sqrt(sum));
        for (size_t i = 0; i < d; i++) q[i] = query[i] * norm;
        float (*dot)(const float *, const int8_t *, size_t) = floatCodeDotPortable;
#if defined(__x86_64__)
        if (chosenKernel() >= SLUICE_HNSW_KERNEL_AVX2 && __builtin_cpu_supports("fma")) dot = floatCodeDotAVX2;
#endif
        const float h = float(std::sqrt(double(d)) / 2), slack = 1e-4f;
        std::shared_lock<std::shared_mutex> guard(index->lock);
        auto &graph = *index->graph;
        const size_t count = graph.cur_element_count;
        // The best `capacity` kept in a heap whose top is the worst of them (bound, then label: a total order, so
        // the answer does not depend on the graph's internal order): memory of `capacity` entries, not of every
        // label (16 MB a search at a million, mapped and faulted in each time).
        auto higher = [](const std::pair<float, uint64_t> &a, const std::pair<float, uint64_t> &b) {
            return a.first > b.first || (a.first == b.first && a.second < b.second);
        };
        std::vector<std::pair<float, uint64_t>> best;
        best.reserve(std::min(capacity, count));
        for (size_t id = 0; id < count; id++) {
            const hnswlib::tableint internal = hnswlib::tableint(id);
            if (graph.isMarkedDeleted(internal)) continue;
            const uint8_t *code = reinterpret_cast<const uint8_t *>(graph.getDataByInternalId(internal));
            const std::pair<float, uint64_t> entry{
                cosineBound(q.data(), code, d, h, slack, dot), graph.getExternalLabel(internal)};
            // Every label's bound is computed whether or not it may be read: the pass costs the same for every
            // caller, and only the labels it may read enter the heap.
            if (label_values != nullptr) {
                const uint64_t label = entry.second;
                const uint32_t value = label < label_count ? label_values[label] : 0;
                if (label >= label_count || value >= value_count || value_allowed[value] == 0) continue;
            }
            if (best.size() < capacity) {
                best.push_back(entry);
                std::push_heap(best.begin(), best.end(), higher);
            } else if (capacity > 0 && higher(entry, best.front())) {
                std::pop_heap(best.begin(), best.end(), higher);
                best.back() = entry;
                std::push_heap(best.begin(), best.end(), higher);
            }
        }
        std::sort_heap(best.begin(), best.end(), higher);
        const size_t n = best.size();
        for (size_t i = 0; i < n; i++) {
            bounds[i] = best[i].first;
            labels[i] = best[i].second;
        }
        return n;
    } catch (...) {
        return 0;
    }
}

size_t sluice_hnsw_element_count(SluiceHNSW *index)
{
    std::shared_lock<std::shared_mutex> guard(index->lock);
    return index->graph->cur_element_count;
}

size_t sluice_hnsw_capacity(SluiceHNSW *index)
{
    std::shared_lock<std::shared_mutex> guard(index->lock);
    return index->graph->max_elements_;
}

size_t sluice_hnsw_deleted_count(SluiceHNSW *index)
{
    std::shared_lock<std::shared_mutex> guard(index->lock);
    return index->graph->num_deleted_;
}

size_t sluice_hnsw_memory_bytes(SluiceHNSW *index)
{
    std::shared_lock<std::shared_mutex> guard(index->lock);
    auto &graph = *index->graph;
    size_t bytes = graph.max_elements_ * graph.size_data_per_element_;
    for (size_t i = 0; i < graph.cur_element_count; i++) {
        bytes += graph.element_levels_[i] > 0 ? graph.size_links_per_element_ * graph.element_levels_[i] : 0;
    }
    bytes += graph.max_elements_ * (sizeof(void *) + sizeof(int) + sizeof(std::mutex));  // link lists, levels
    bytes += graph.max_update_element_locks * sizeof(std::mutex);
    bytes += graph.label_lookup_.size() * 48 + graph.label_lookup_.bucket_count() * sizeof(void *);
    bytes += graph.max_elements_ * sizeof(unsigned short);  // one visited list (one more per concurrent search)
    return bytes;
}

int sluice_hnsw_distance_kernel(void) { return chosenKernel(); }

float sluice_hnsw_quantized_distance(const float *a, const float *b, size_t dimensions, int kernel)
{
    auto distance = distanceKernel(kernel);
    if (distance == nullptr) {
        return std::nanf("");
    }
    std::vector<uint8_t> x(scaleBytes + dimensions), y(scaleBytes + dimensions);
    quantized(a, dimensions, x.data());
    quantized(b, dimensions, y.data());
    QuantizedSpaceParameters parameters{dimensions};
    return distance(x.data(), y.data(), &parameters);
}

size_t sluice_ivf_code_bytes(size_t dimensions) { return scaleBytes + dimensions; }

void sluice_ivf_encode(const float *vector, size_t dimensions, uint8_t *out) { quantized(vector, dimensions, out); }

void sluice_ivf_decode(const uint8_t *codes, size_t count, size_t dimensions, float *vectors)
{
    const size_t codeBytes = scaleBytes + dimensions;
    for (size_t v = 0; v < count; v++) {
        const uint8_t *code = codes + v * codeBytes;
        float scale;
        std::memcpy(&scale, code, sizeof scale);
        const int8_t *values = reinterpret_cast<const int8_t *>(code + scaleBytes);
        float *row = vectors + v * dimensions;
        for (size_t i = 0; i < dimensions; i++) {
            row[i] = float(values[i]) * scale;
        }
    }
}

void sluice_ivf_score(
    const uint8_t *query_code, const uint8_t *codes, size_t count, size_t stride, size_t dimensions,
    float *similarities)
{
    static const hnswlib::DISTFUNC<float> distance = distanceKernel(chosenKernel());
    QuantizedSpaceParameters parameters{dimensions};
    for (size_t i = 0; i < count; i++) {
        similarities[i] = 1.0f - distance(query_code, codes + i * stride, &parameters);
    }
}

#if defined(__x86_64__)
#define SLUICE_IVF_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define SLUICE_IVF_CLONES
#endif

// Eight partial sums, so that the compiler vectorizes the loop without reassociating (`-ffast-math` is
// not on): the same sums in the same order on every CPU, whichever clone runs.
SLUICE_IVF_CLONES static float innerProduct(const float *a, const float *b, size_t n)
{
#pragma clang fp contract(off)
    float partial[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        for (size_t j = 0; j < 8; j++) {
            partial[j] += a[i + j] * b[i + j];
        }
    }
    for (; i < n; i++) {
        partial[i % 8] += a[i] * b[i];
    }
    return ((partial[0] + partial[1]) + (partial[2] + partial[3])) + ((partial[4] + partial[5]) + (partial[6] + partial[7]));
}

void sluice_ivf_products(const float *rows, size_t count, size_t dimensions, const float *vector, float *products)
{
    for (size_t r = 0; r < count; r++) {
        products[r] = innerProduct(rows + r * dimensions, vector, dimensions);
    }
}

void sluice_ivf_nearest(
    const float *rows, size_t row_count, size_t dimensions, const float *vectors, size_t count, uint32_t *nearest)
{
    for (size_t v = 0; v < count; v++) {
        const float *vector = vectors + v * dimensions;
        float best = -INFINITY;
        uint32_t bestRow = 0;
        for (size_t r = 0; r < row_count; r++) {
            float product = innerProduct(rows + r * dimensions, vector, dimensions);
            if (product > best) {
                best = product;
                bestRow = uint32_t(r);
            }
        }
        nearest[v] = bestRow;
    }
}
