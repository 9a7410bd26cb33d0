// The element-wise kernels of Sluice's MiniLM encoder (LayerNorm, GELU, softmax), in C so that the
// compiler vectorizes them: plain loops over floats, no library calls in the hot loops.
#ifndef SLUICE_MINILM_KERNELS_H
#define SLUICE_MINILM_KERNELS_H

/// row = LayerNorm(row + bias) * gamma + beta over n values (bias may be NULL).
void sluice_minilm_layer_norm(float *row, const float *bias, const float *gamma, const float *beta, int n, float epsilon);

/// x = GELU(x + bias) for rows × columns values (bias has `columns` values); exact GELU x/2·(1+erf(x/√2)),
/// erf to within 1.5e-7 (Abramowitz & Stegun 7.1.26).
void sluice_minilm_bias_gelu(float *values, int rows, int columns, const float *bias);

/// Softmax of each of `rows` rows of n values, in place.
void sluice_minilm_softmax(float *values, int rows, int n);

#endif
