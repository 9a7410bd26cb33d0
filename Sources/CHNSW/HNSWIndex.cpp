// See HNSWIndex.h.
//
// hnswlib picks its distance kernels with compile-time macros: this file is built for the baseline x86-64
// (or arm64) target, so the inner product runs on SSE (`USE_SSE`); the AVX and AVX-512 kernels would need
// the whole translation unit built for those CPUs, which a portable binary must not be.
#include "HNSWIndex.h"

#include <hnswlib/hnswlib.h>

#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

// hnswlib's inner-product distance (1 − a·b), with the widest vectors the CPU has, chosen at run time:
// hnswlib 0.6.2 chooses its kernel when it is compiled, and this build is for the baseline x86-64 (SSE).
// Inserting into the graph spends most of its time here (31% of a pipeline run's CPU with SSE).
__attribute__((target("avx512f"))) float innerProductDistanceAVX512(const void *a, const void *b, const void *size)
{
    const float *x = static_cast<const float *>(a);
    const float *y = static_cast<const float *>(b);
    size_t n = *static_cast<const size_t *>(size);
    __m512 sum = _mm512_setzero_ps();
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        sum = _mm512_fmadd_ps(_mm512_loadu_ps(x + i), _mm512_loadu_ps(y + i), sum);
    }
    float dot = _mm512_reduce_add_ps(sum);
    for (; i < n; i++) {
        dot += x[i] * y[i];
    }
    return 1.0f - dot;
}

__attribute__((target("avx2,fma"))) float innerProductDistanceAVX2(const void *a, const void *b, const void *size)
{
    const float *x = static_cast<const float *>(a);
    const float *y = static_cast<const float *>(b);
    size_t n = *static_cast<const size_t *>(size);
    __m256 sum0 = _mm256_setzero_ps();
    __m256 sum1 = _mm256_setzero_ps();
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        sum0 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i), sum0);
        sum1 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i + 8), _mm256_loadu_ps(y + i + 8), sum1);
    }
    __m256 sum = _mm256_add_ps(sum0, sum1);
    __m128 half = _mm_add_ps(_mm256_castps256_ps128(sum), _mm256_extractf128_ps(sum, 1));
    half = _mm_hadd_ps(half, half);
    half = _mm_hadd_ps(half, half);
    float dot = _mm_cvtss_f32(half);
    for (; i < n; i++) {
        dot += x[i] * y[i];
    }
    return 1.0f - dot;
}

// hnswlib's InnerProductSpace with the kernel above that the CPU runs (its own SSE one otherwise).
class DispatchedInnerProductSpace : public hnswlib::SpaceInterface<float> {
  public:
    explicit DispatchedInnerProductSpace(size_t dimensions) : fallback_(dimensions), dimensions_(dimensions)
    {
        distance_ = fallback_.get_dist_func();
        if (__builtin_cpu_supports("avx512f")) {
            distance_ = innerProductDistanceAVX512;
        } else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
            distance_ = innerProductDistanceAVX2;
        }
    }
    size_t get_data_size() override { return fallback_.get_data_size(); }
    hnswlib::DISTFUNC<float> get_dist_func() override { return distance_; }
    void *get_dist_func_param() override { return &dimensions_; }

  private:
    hnswlib::InnerProductSpace fallback_;
    size_t dimensions_;
    hnswlib::DISTFUNC<float> distance_;
};

}  // namespace

struct SluiceHNSW {
    size_t dimensions;
    std::unique_ptr<DispatchedInnerProductSpace> space;
    std::unique_ptr<hnswlib::HierarchicalNSW<float>> graph;
    std::shared_mutex lock;
};

static void fail(char *error, size_t error_size, const char *what)
{
    if (error != nullptr && error_size > 0) {
        std::snprintf(error, error_size, "%s", what);
    }
}

// Runs `body`, turning a C++ exception into `failed` and a message in `error`.
template <typename Result, typename Body>
static Result guarded(char *error, size_t error_size, Result failed, Body body)
{
    try {
        return body();
    } catch (const std::exception &exception) {
        fail(error, error_size, exception.what());
    } catch (...) {
        fail(error, error_size, "unknown error");
    }
    return failed;
}

static void normalized(const float *vector, size_t dimensions, float *out)
{
    double sum = 0;
    for (size_t i = 0; i < dimensions; i++) {
        sum += double(vector[i]) * double(vector[i]);
    }
    float scale = sum > 0 ? float(1.0 / std::sqrt(sum)) : 0.0f;
    for (size_t i = 0; i < dimensions; i++) {
        out[i] = vector[i] * scale;
    }
}

SluiceHNSW *sluice_hnsw_create(
    size_t dimensions, size_t capacity, size_t m, size_t ef_construction, char *error, size_t error_size)
{
    return guarded(error, error_size, static_cast<SluiceHNSW *>(nullptr), [&]() {
        auto index = std::make_unique<SluiceHNSW>();
        index->dimensions = dimensions;
        index->space = std::make_unique<DispatchedInnerProductSpace>(dimensions);
        index->graph = std::make_unique<hnswlib::HierarchicalNSW<float>>(
            index->space.get(), std::max<size_t>(capacity, 16), m, ef_construction);
        return index.release();
    });
}

SluiceHNSW *sluice_hnsw_load(const char *path, size_t dimensions, char *error, size_t error_size)
{
    return guarded(error, error_size, static_cast<SluiceHNSW *>(nullptr), [&]() -> SluiceHNSW * {
        auto index = std::make_unique<SluiceHNSW>();
        index->dimensions = dimensions;
        index->space = std::make_unique<DispatchedInnerProductSpace>(dimensions);
        index->graph = std::make_unique<hnswlib::HierarchicalNSW<float>>(index->space.get(), std::string(path));
        auto &graph = *index->graph;
        // The file does not record the dimension: its element size must be this dimension's.
        if (graph.size_data_per_element_ != graph.size_links_level0_ + dimensions * sizeof(float) +
                sizeof(hnswlib::labeltype)) {
            fail(error, error_size, "the index file was made for another dimension");
            return nullptr;
        }
        // hnswlib 0.6.2's loading constructor leaves the deleted count uninitialized before adding to it.
        graph.num_deleted_ = 0;
        for (size_t i = 0; i < graph.cur_element_count; i++) {
            if (graph.isMarkedDeleted(i)) {
                graph.num_deleted_ += 1;
            }
        }
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
            graph.resizeIndex(std::max(graph.max_elements_ * 2, graph.cur_element_count + added));
        }
        const size_t dimensions = index->dimensions;
        std::atomic<size_t> next{0};
        std::atomic<bool> failed{false};
        std::string message;
        std::mutex message_lock;
        auto work = [&]() {
            std::vector<float> row(dimensions);
            for (size_t i = next++; i < count && !failed; i = next++) {
                try {
                    normalized(vectors + i * dimensions, dimensions, row.data());
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

void sluice_hnsw_set_ef(SluiceHNSW *index, size_t ef)
{
    std::unique_lock<std::shared_mutex> guard(index->lock);
    index->graph->setEf(ef);
}

size_t sluice_hnsw_search(SluiceHNSW *index, const float *query, size_t k, uint64_t *labels, float *similarities)
{
    try {
        std::vector<float> row(index->dimensions);
        normalized(query, index->dimensions, row.data());
        std::shared_lock<std::shared_mutex> guard(index->lock);
        auto found = index->graph->searchKnn(row.data(), k);
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

size_t sluice_hnsw_element_count(SluiceHNSW *index)
{
    std::shared_lock<std::shared_mutex> guard(index->lock);
    return index->graph->cur_element_count;
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
