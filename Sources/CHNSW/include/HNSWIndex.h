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

/// For an exact search by the stored vectors (a filtered one): every label not deleted, with an upper bound on its
/// cosine to `query` computed from its 8-bit code (the code's rounding bounded by its scale; a true cosine never
/// exceeds it), the `capacity` highest bounds, highest first (ties by label), into `labels` and `bounds`. Returns
/// how many were written: `capacity`, or fewer when the graph holds fewer (0 for a zero query). A caller that
/// reads records in this order may stop once its k-th best exact score exceeds the next bound.
///
/// With `label_values` (not NULL), only the labels a caller may read are returned: label `l` is returned when
/// `l < label_count` and `value_allowed[label_values[l]]` is nonzero (a value id past `value_count` is not allowed).
/// Every label's bound is computed all the same, so the pass does the same work whatever the caller may read.
size_t sluice_hnsw_bounds(SluiceHNSW *index, const float *query, size_t capacity, const uint32_t *label_values,
    size_t label_count, const uint8_t *value_allowed, size_t value_count, uint64_t *labels, float *bounds);

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

/// The file graph's product-quantizer table of `query` (its dot product with every centroid of every sub-space,
/// `code_bytes` × 256 floats into `table`) built by `kernel`, with codebooks of `code_bytes` bytes trained on
/// the `count` vectors at `vectors` (`dimensions` floats each, at least 1). Returns the floats written: 0 if this
/// CPU cannot run that kernel, or `code_bytes` does not fit `dimensions` (sub-vectors a multiple of 4). For
/// tests of the kernels against each other.
size_t sluice_pq_table(
    const float *vectors, size_t count, size_t dimensions, size_t code_bytes, const float *query, int kernel,
    float *table);

// MARK: - The IVF index's codes (`sink.local_index: ivf`, Sources/SluiceSinks/LocalIVF*.swift)
//
// The IVF index stores each vector as the graph does (a float scale, then one signed byte a dimension, of
// the L2-normalized vector) inside LMDB values, and scores them in place with the graph's kernels.

/// Bytes of one code: the scale and `dimensions` signed bytes.
size_t sluice_ivf_code_bytes(size_t dimensions);

/// `vector` L2-normalized and quantized into `out` (`sluice_ivf_code_bytes(dimensions)` bytes), exactly as
/// the graph quantizes its vectors.
void sluice_ivf_encode(const float *vector, size_t dimensions, uint8_t *out);

/// `count` codes (`sluice_ivf_code_bytes(dimensions)` bytes each, one after another) decoded into `vectors`
/// (`dimensions` floats each, row after row): each signed byte times its code's scale, so each row is its
/// vector L2-normalized, up to the codes' rounding.
void sluice_ivf_decode(const uint8_t *codes, size_t count, size_t dimensions, float *vectors);

/// The cosine similarity, by the codes, of `query_code` and each of `count` codes found every `stride` bytes
/// from `codes` (an entry's label may sit between them), into `similarities`, with the widest kernel this
/// CPU runs (`sluice_hnsw_distance_kernel`). Every kernel gives the same values bit for bit.
void sluice_ivf_score(
    const uint8_t *query_code, const uint8_t *codes, size_t count, size_t stride, size_t dimensions,
    float *similarities);

/// The inner product of `vector` with each of `count` rows of `rows` (`dimensions` floats each), into
/// `products` (the IVF index's distances to its centroids). Built for the baseline CPU and for AVX2 and
/// AVX-512, chosen at run time.
void sluice_ivf_products(const float *rows, size_t count, size_t dimensions, const float *vector, float *products);

/// For each of `count` vectors (`dimensions` floats each, row after row), the row of `rows` (`row_count`
/// rows) with the largest inner product (the first such row on a tie), into `nearest`.
void sluice_ivf_nearest(
    const float *rows, size_t row_count, size_t dimensions, const float *vectors, size_t count, uint32_t *nearest);

// MARK: - The graph with its nodes in a file (`sink.hnsw.nodes: file`, Sources/CHNSW/FileGraph.cpp)
//
// The same graph algorithm and 8-bit codes as above, but its level-0 records (each label's list and code,
// 8 + 8M + 4 + d bytes) live in one file read with `pread` and written with `pwrite`; in memory are only a
// byte a label (its level), the upper layers' lists (about 7 bytes a label at M 16) and, once trained, a
// product-quantized code a label (DiskANN's navigation: `code_bytes` bytes; the candidates of a level-0 search
// are ranked by their codes and only the nodes it expands are read, then ranked by their 8-bit vectors). Labels are the
// record's place in the file: they must be below 2^32 − 1, and are best dense (the store's are). The same
// thread-safety contract and error convention as `sluice_hnsw_*` (a batch's inserts run side by side, searches
// wait for the batch).
//
// Writes never go to a named file: a new graph works in an unnamed file (O_TMPFILE) of `directory`, a loaded
// one copies its file into such a file at its first write. A graph freed without saving leaves no file.

typedef struct SluiceFileGraph SluiceFileGraph;

/// A new empty graph whose working file is made in `directory` (the store's folder), with room for
/// `capacity` labels in memory before it grows. `code_bytes`: bytes of each label's product-quantized code
/// (lowered to the largest count whose sub-vectors are a multiple of 4 dimensions; 0: no codes, every node a
/// search scores is read); the codebooks are trained from the graph's 8-bit vectors (at most `codes_from` and
/// 4,096 of them) when it first holds `codes_from` labels — or fewer, when the records of that many would not
/// fit its resident budget (`sluice_fgraph_set_resident_bytes`; at least 4,096) — and every label is encoded
/// then; until then searches and inserts score every node they meet exactly, its record held in memory.
SluiceFileGraph *sluice_fgraph_create(
    const char *directory, size_t dimensions, size_t capacity, size_t m, size_t ef_construction, size_t code_bytes,
    size_t codes_from, char *error, size_t error_size);

/// The graph saved at `path` by `sluice_fgraph_save`, read only until its first write (which copies it into a
/// working file in the same folder). Only the header and the upper section are read. Fails with a message if
/// the file is cut short, its header or upper section is damaged (checksums), or it was made for another
/// dimension, format or quantizer. `ef_construction` is for later inserts (not recorded in the file).
SluiceFileGraph *sluice_fgraph_load(
    const char *path, size_t dimensions, size_t ef_construction, char *error, size_t error_size);

/// Closes the graph; an unsaved working file goes with it.
void sluice_fgraph_free(SluiceFileGraph *graph);

/// Writes the upper section and then the header to the working file, `fdatasync`s it and links it under
/// `path` (replacing a file there); the caller fsyncs the folder and renames. The named file is never
/// written again: the next write makes a new working copy.
int sluice_fgraph_save(SluiceFileGraph *graph, const char *path, char *error, size_t error_size);

/// As `sluice_hnsw_add`: a label already present, deleted or not, gets the new vector and new neighbours
/// (links from other nodes to it stay). The batch's new labels are inserted by up to `threads` threads at
/// once (one a 64 inserts at most, a lock a node's lists; the runs end where the codes are trained), then the
/// replacements and a label's later vectors in the batch one at a time, in order: a label ends with its last
/// vector. With one thread the graph built is the same every time.
int sluice_fgraph_add(
    SluiceFileGraph *graph, const float *vectors, const uint64_t *labels, size_t count, size_t threads,
    char *error, size_t error_size);

/// Sets `label`'s tombstone (searches pass through it and never return it). 1 if it was present and not yet
/// deleted, 0 otherwise, −1 (with a message) if the file could not be written.
int sluice_fgraph_mark_deleted(SluiceFileGraph *graph, uint64_t label, char *error, size_t error_size);

/// As `sluice_hnsw_search` (0 results if a read fails).
size_t sluice_fgraph_search(
    SluiceFileGraph *graph, const float *query, size_t k, size_t ef, uint64_t *labels, float *similarities);

size_t sluice_fgraph_element_count(SluiceFileGraph *graph);
size_t sluice_fgraph_deleted_count(SluiceFileGraph *graph);
size_t sluice_fgraph_capacity(SluiceFileGraph *graph);
/// Bytes in memory: the level bytes, the upper lists and their map, the codes and codebooks, the records held
/// (the file's pages are the kernel's).
size_t sluice_fgraph_memory_bytes(SluiceFileGraph *graph);
/// Bytes of each label's code once the codebooks are trained (searches and inserts rank by codes), else 0.
size_t sluice_fgraph_code_bytes(SluiceFileGraph *graph);

/// The code bytes of the graph saved at `path` once its codebooks are trained, 0 before (from its header alone:
/// its checksums are not verified, its load does that); -1 if it cannot be read or is not a node file.
long sluice_fgraph_saved_code_bytes(const char *path);

/// The default resident budget: 8 MB.
#define SLUICE_FGRAPH_RESIDENT_BYTES ((size_t)8 << 20)

/// Sets the graph's resident budget (`SLUICE_FGRAPH_RESIDENT_BYTES` by default): while every record fits
/// `bytes` (and, whatever their size, until the codes are trained) the records are held in memory as well as
/// in the file — a search or an insert then makes no read — and let go when the graph outgrows it. A budget
/// also bounds when the codes are trained (above). 0: only the first 4,096 records, until the training.
void sluice_fgraph_set_resident_bytes(SluiceFileGraph *graph, size_t bytes);

#ifdef __cplusplus
}
#endif
