// The kernels of Sluice's MiniLM encoder besides the dense products (LayerNorm, GELU, fused attention),
// in C so that they are vectorized and optimized in every build: plain loops and the compiler's generic
// vectors over floats, no library calls in the hot loops.
#ifndef SLUICE_MINILM_KERNELS_H
#define SLUICE_MINILM_KERNELS_H

#include <stdint.h>

/// row = LayerNorm(row + bias) * gamma + beta over n values (bias may be NULL).
void sluice_minilm_layer_norm(float *row, const float *bias, const float *gamma, const float *beta, int n, float epsilon);

/// x = GELU(x + bias) for rows × columns values (bias has `columns` values); exact GELU x/2·(1+erf(x/√2)),
/// erf to within 1.5e-7 (Abramowitz & Stegun 7.1.26).
void sluice_minilm_bias_gelu(float *values, int rows, int columns, const float *bias);

/// The size of one attention head (all-MiniLM-L6-v2: 384 / 12).
#define SLUICE_MINILM_HEAD_SIZE 32

/// The floats of scratch space `sluice_minilm_attention` needs for a sequence of n tokens.
long sluice_minilm_attention_scratch_count(int n);

/// Multi-head self-attention of one sequence of n tokens, every token attending to all n:
/// context[i, head] = softmax(q[i, head] · k[·, head]ᵀ) · v[·, head] for each head of
/// SLUICE_MINILM_HEAD_SIZE values. Row i of `qkv` (row stride `stride`) holds the token's queries
/// (pre-scaled by 1/√head size), keys and values, `heads` × SLUICE_MINILM_HEAD_SIZE each; row i of
/// `context` (row stride `contextStride`) receives the heads side by side. `scratch` holds at least
/// `sluice_minilm_attention_scratch_count(n)` floats.
void sluice_minilm_attention(
    const float *qkv, int n, int stride, int heads, float *context, int contextStride, float *scratch);

// The int8 path (`embed.precision: int8`): dynamic quantization of the dense layers. Weights per output
// channel, symmetric, in [-SLUICE_MINILM_INT8_WEIGHT_MAX, SLUICE_MINILM_INT8_WEIGHT_MAX], once at load;
// activations per row, asymmetric uint8, at run time; integer dot products exact in int32.

/// The largest quantized weight: 7 bits, so that a pair of uint8 × int8 products fits in int16.
#define SLUICE_MINILM_INT8_WEIGHT_MAX 63
/// Output channels per packed block (n must be a multiple of it, k a multiple of 4).
#define SLUICE_MINILM_INT8_BLOCK 16

/// The integer dot-product kernels; each computes the same exact sums.
enum {
    SLUICE_MINILM_INT8_PORTABLE = 0,
    SLUICE_MINILM_INT8_AVX2 = 1,          // vpmaddubsw + vpmaddwd
    SLUICE_MINILM_INT8_AVX512_VNNI = 2,   // vpdpbusd
};

/// Whether this CPU runs `kernel`.
int sluice_minilm_int8_kernel_supported(int kernel);

/// The fastest kernel this CPU runs.
int sluice_minilm_int8_best_kernel(void);

/// The bytes of packed weights for an n×k matrix: the blocks, then the AVX2 kernel's plan (n / 16 × k / 8
/// bytes: which pairs of groups of 4 inputs it may sum in int16 before widening).
long sluice_minilm_int8_packed_count(int n, int k);

/// Whether two groups of a block (64 packed bytes each: 16 channels × 4 inputs) may have their vpmaddubsw
/// sums added in int16, exactly for any uint8 activations: in each channel and pair of inputs, the
/// positive weights of both groups sum to at most 128 and so do the negative ones' magnitudes.
int sluice_minilm_int8_pair_is_exact(const int8_t *first, const int8_t *second);

/// How many pairs of groups in weights packed by sluice_minilm_int8_pack_weights the AVX2 kernel sums in int16.
long sluice_minilm_int8_exact_pairs(const int8_t *packed, int n, int k);

/// Quantizes `weights` (n output channels × k inputs, row-major) per channel: `packed` receives
/// `sluice_minilm_int8_packed_count(n, k)` bytes in blocks of SLUICE_MINILM_INT8_BLOCK channels × groups of
/// 4 inputs; `scales[j]` the channel's scale and `scaledSums[j]` its scale × the sum of its quantized weights.
void sluice_minilm_int8_pack_weights(
    const float *weights, int n, int k, int8_t *packed, float *scales, float *scaledSums);

/// Quantizes m rows of k floats (row stride `stride`) to uint8: row r ≈ scales[r] · quantized[r] + offsets[r]
/// (offset: the row's minimum). `quantized` has row stride k.
void sluice_minilm_int8_quantize_rows(
    const float *rows, int m, int k, int stride, uint8_t *quantized, float *scales, float *offsets);

/// c[i, j] (+)= Σ_c A[i, c] · W[j, c] for m quantized rows (from sluice_minilm_int8_quantize_rows) and n
/// packed channels (from sluice_minilm_int8_pack_weights), with `kernel` (one this CPU supports); adds to c
/// when `accumulate` is non-zero, else overwrites. c has row stride `ldc`.
void sluice_minilm_int8_multiply(
    int kernel, const uint8_t *a, const float *rowScales, const float *rowOffsets, int m, int k,
    const int8_t *packed, const float *scales, const float *scaledSums, int n, float *c, int ldc, int accumulate);

#endif
