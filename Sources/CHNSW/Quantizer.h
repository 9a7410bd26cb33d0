// The graph's 8-bit quantizer and distance kernels (HNSWIndex.cpp), shared with the graph whose nodes live in a
// file (FileGraph.cpp). Internal to CHNSW: not part of its C interface.
#pragma once
#include <stddef.h>
#include <stdint.h>

namespace sluice_chnsw {

/// Bytes of a code's scale (a float, first), before its `dimensions` signed bytes.
constexpr size_t scaleBytes = sizeof(float);

/// A kernel's third argument: the dimension of the codes it compares.
struct QuantizedSpaceParameters {
    size_t dimensions;
};

/// 1 − a·b of two codes (`parameters` is a `QuantizedSpaceParameters`).
using Distance = float (*)(const void *a, const void *b, const void *parameters);

/// The widest kernel this CPU runs (run-time dispatch; `SLUICE_HNSW_VECTOR_WIDTH` lowers it).
Distance chosenDistance();

/// `vector` L2-normalized and quantized into `out` (`scaleBytes + dimensions` bytes).
void quantize(const float *vector, size_t dimensions, uint8_t *out);

}  // namespace sluice_chnsw
