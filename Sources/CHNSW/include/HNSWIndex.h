// An approximate nearest-neighbour index (hnswlib 0.6.2's HierarchicalNSW, header-only C++) behind a C
// interface, for the local store (Sources/SluiceSinks/LocalANNIndex.swift).
//
// Vectors are L2-normalized and quantized to 8 bits (one scale per vector) on the way in, and searched by
// inner product, so a result's distance is 1 - cosine, within the rounding (about 0.01): the caller ranks
// the candidates again by its own vectors. Labels are the caller's 64-bit numbers. One handle may be used from several threads at
// once: searches share a lock, writes (add, delete, resize, save) take it alone.
//
// Every function that can fail returns 0 (or NULL) and copies a message into `error` (at most
// `error_size` bytes, always terminated); hnswlib's C++ exceptions never cross this interface.
#pragma once
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct SluiceHNSW SluiceHNSW;

/// A new empty index for `dimensions`-long vectors, with room for `capacity` before it grows.
/// `m` (graph degree) and `ef_construction` (candidate list while inserting) are hnswlib's parameters.
SluiceHNSW *sluice_hnsw_create(
    size_t dimensions, size_t capacity, size_t m, size_t ef_construction, char *error, size_t error_size);

/// An index saved by `sluice_hnsw_save`. Fails if the file is damaged, cut short, or was made for another
/// dimension.
SluiceHNSW *sluice_hnsw_load(const char *path, size_t dimensions, char *error, size_t error_size);

void sluice_hnsw_free(SluiceHNSW *index);

/// Writes the index to `path` (the caller makes it durable: fsync, rename).
int sluice_hnsw_save(SluiceHNSW *index, const char *path, char *error, size_t error_size);

/// Adds `count` vectors (`count` × dimensions floats, row after row) under `labels`. A label already in
/// the index, deleted or not, has its vector replaced (so a deleted label's slot is re-used). Up to
/// `threads` threads insert at once. Grows the index as needed, by an eighth of its capacity (at least 1,024
/// slots) or to what the batch needs, whichever is more.
int sluice_hnsw_add(
    SluiceHNSW *index, const float *vectors, const uint64_t *labels, size_t count, size_t threads, char *error,
    size_t error_size);

/// Marks `label` deleted (it stays in the graph as a waypoint and is never returned). Returns 1 if it was
/// present and not yet deleted, 0 otherwise.
int sluice_hnsw_mark_deleted(SluiceHNSW *index, uint64_t label);

/// The up to `k` nearest labels to `query`, nearest first, and their cosine similarities by the quantized
/// vectors, from a search that keeps `ef` candidates (hnswlib's `ef`; at least `k`). The breadth is an
/// argument of each search, not a setting of the graph, so that searches of different breadths can run at
/// once without changing shared state. Returns how many were written.
size_t sluice_hnsw_search(
    SluiceHNSW *index, const float *query, size_t k, size_t ef, uint64_t *labels, float *similarities);

/// Elements in the graph (deleted ones included), deleted elements, and the bytes the index holds in memory
/// (vectors, graph, label table and locks; an estimate within a few percent).
size_t sluice_hnsw_element_count(SluiceHNSW *index);
size_t sluice_hnsw_deleted_count(SluiceHNSW *index);
/// Element slots reserved (used or not): the index grows past it by `sluice_hnsw_add`.
size_t sluice_hnsw_capacity(SluiceHNSW *index);
size_t sluice_hnsw_memory_bytes(SluiceHNSW *index);

/// The graph's distance kernels: all give the same distances (the dot product of the 8-bit values is exact
/// in each), the widest one the CPU has is chosen once at run time (never at build time), and
/// `SLUICE_HNSW_VECTOR_WIDTH=avx2|baseline` lowers the choice.
enum SluiceHNSWKernel {
    SLUICE_HNSW_KERNEL_PORTABLE = 0,      ///< plain C++, any CPU
    SLUICE_HNSW_KERNEL_AVX2 = 1,          ///< `vpmaddubsw` on 32 bytes
    SLUICE_HNSW_KERNEL_AVX512_VNNI = 2,   ///< `vpdpbusd` on 64 bytes
};

/// The kernel the graph uses on this CPU (a `SluiceHNSWKernel`).
int sluice_hnsw_distance_kernel(void);

/// 1 − a·b of `a` and `b` as the graph holds them (L2-normalized, quantized to 8 bits), by `kernel`; NaN if
/// this CPU cannot run that kernel. For tests of the kernels against each other.
float sluice_hnsw_quantized_distance(const float *a, const float *b, size_t dimensions, int kernel);

#ifdef __cplusplus
}
#endif
