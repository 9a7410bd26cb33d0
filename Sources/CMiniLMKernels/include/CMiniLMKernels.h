// The kernels of Sluice's MiniLM encoder besides the dense products (LayerNorm, GELU, fused attention),
// in C so that they are vectorized and optimized in every build: plain loops and the compiler's generic
// vectors over floats, no library calls in the hot loops.
#ifndef SLUICE_MINILM_KERNELS_H
#define SLUICE_MINILM_KERNELS_H

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

#endif
