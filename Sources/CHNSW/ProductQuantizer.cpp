// The product quantizer's C entry point (HNSWIndex.h, `sluice_pq_table`): its table built by a chosen kernel,
// for tests of the kernels against each other (ProductQuantizer.h holds the quantizer; the file graph uses it).
#include "HNSWIndex.h"
#include "ProductQuantizer.h"
#include "Quantizer.h"

#include <cmath>
#include <vector>

size_t sluice_pq_table(
    const float *vectors, size_t count, size_t dimensions, size_t code_bytes, const float *query, int kernel,
    float *table)
{
    if (count == 0 || code_bytes == 0 || dimensions % (4 * code_bytes) != 0) return 0;
    const float probe[4] = {1, 0, 0, 0};
    if (std::isnan(sluice_hnsw_quantized_distance(probe, probe, 4, kernel))) return 0;  // not this CPU
    sluice_chnsw::ProductQuantizer pq;
    pq.train(vectors, count, dimensions, code_bytes, 4, 0x7AB1E);
    pq.kernel = sluice_chnsw::tableDotsKernel(kernel);
    std::vector<uint8_t> code(sluice_chnsw::scaleBytes + dimensions);
    sluice_chnsw::quantize(query, dimensions, code.data());
    pq.buildTable(reinterpret_cast<const char *>(code.data()), table);
    return pq.tableFloats();
}
