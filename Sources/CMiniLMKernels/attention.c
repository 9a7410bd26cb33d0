#include "CMiniLMKernels.h"
#include "support.h"

// Self-attention of one sequence, fused per head: scores, softmax and context in one pass over blocks of
// query rows, with the scores of a block kept in a few KiB (no n×n matrix goes through memory).
//
// Vectors are the compiler's generic 16-float vectors: AVX-512 in that clone, two AVX2 or four SSE
// registers in the others. The products are register-blocked: ROWS query rows × 32 keys for the scores
// (8 accumulators), ROWS rows × the 32 values of a head for the context, where a 16-float vector is one
// register (AVX-512's 32); with two per vector (AVX2's 16 registers) those 16 accumulators spilled to the
// stack, so there a block is ROWS rows × 16 keys and the context is computed 16 values at a time. Every
// score and every context value is the same sum of the same products in the same order either way.

#define ROWS 4
#define KEYS 32  // keys per block of scores; the padded length is a multiple of it

static inline int padded(int n) { return (n + KEYS - 1) / KEYS * KEYS; }

long sluice_minilm_attention_scratch_count(int n) {
    return (long)(SLUICE_MINILM_HEAD_SIZE + ROWS) * padded(n);
}

// exp(row[j] - max) for j < n, in place; returns their sum. Plain loops the compiler vectorizes, inlined
// so that they are built for the attention kernel's clone (as a function of its own it was built for the
// SSE2 baseline only: 4 lanes on every CPU, a tenth of the int8 path's time).
static inline __attribute__((always_inline)) float exponentiate(float *row, int n) {
    // The maximum of 16-lane maxima (a plain running maximum does not vectorize without fast-math).
    float maximum = row[0];
    int j = 0;
    if (n >= 16) {
        sluice_v16 maxima = load16(row);
        for (j = 16; j + 16 <= n; j += 16) maxima = __builtin_elementwise_max(maxima, (sluice_v16)load16(row + j));
        for (int l = 0; l < 16; l++) maximum = maxima[l] > maximum ? maxima[l] : maximum;
    }
    for (; j < n; j++) maximum = row[j] > maximum ? row[j] : maximum;
    for (int j = 0; j < n; j++) row[j] = sluice_exp_baseline(row[j] - maximum);
    return sluice_sum(row, n);
}

SLUICE_CLONED_WIDE(
    sluice_minilm_attention,
    (const float *qkv, int n, int stride, int heads, float *context, int contextStride, float *scratch),
    (qkv, n, stride, heads, context, contextStride, scratch)) {
    enum { D = SLUICE_MINILM_HEAD_SIZE };
    const int np = padded(n);
    const int hidden = heads * D;
    // 16-float vectors per row of a block of scores (2: 32 keys; 1: 16) and of a pass of the context.
    const int keyVectors = wide ? KEYS / 16 : 1;
    const int contextVectors = wide ? D / 16 : 1;
    float *keysT = scratch;             // D × np: the head's keys, transposed, zero past n
    float *scores = scratch + D * np;   // ROWS × np
    for (int head = 0; head < heads; head++) {
        const float *q = qkv + head * D;
        const float *k = qkv + hidden + head * D;
        const float *v = qkv + 2 * hidden + head * D;
        for (int c = 0; c < D; c++) {
            float *column = keysT + (long)c * np;
            for (int j = 0; j < n; j++) column[j] = k[(long)j * stride + c];
            for (int j = n; j < np; j++) column[j] = 0;
        }
        for (int i0 = 0; i0 < n; i0 += ROWS) {
            const int rows = n - i0 < ROWS ? n - i0 : ROWS;
            const float *query[ROWS];
            for (int r = 0; r < ROWS; r++) query[r] = q + (long)(i0 + (r < rows ? r : 0)) * stride;
            // Scores: query rows · keys (the queries are pre-scaled by 1/√D), in blocks up to the first past n.
            for (int jb = 0; jb < n; jb += 16 * keyVectors) {
                sluice_v16 a[ROWS][KEYS / 16];
                for (int r = 0; r < ROWS; r++)
                    for (int h = 0; h < keyVectors; h++) a[r][h] = (sluice_v16){0};
                for (int c = 0; c < D; c++) {
                    sluice_v16 key[KEYS / 16];
                    for (int h = 0; h < keyVectors; h++) key[h] = load16(keysT + (long)c * np + jb + 16 * h);
                    for (int r = 0; r < ROWS; r++) {
                        const float x = query[r][c];
                        for (int h = 0; h < keyVectors; h++) a[r][h] += x * key[h];
                    }
                }
                for (int r = 0; r < ROWS; r++)
                    for (int h = 0; h < keyVectors; h++) store16(scores + r * np + jb + 16 * h, a[r][h]);
            }
            float inverse[ROWS];
            for (int r = 0; r < ROWS; r++) inverse[r] = r < rows ? 1.0f / exponentiate(scores + r * np, n) : 0;
            // Context: the unnormalized probabilities · values, scaled by 1/sum once at the end.
            for (int p0 = 0; p0 < D / 16; p0 += contextVectors) {
                sluice_v16 c[ROWS][D / 16];
                for (int r = 0; r < ROWS; r++)
                    for (int part = 0; part < contextVectors; part++) c[r][part] = (sluice_v16){0};
                for (int j = 0; j < n; j++) {
                    sluice_v16 value[D / 16];
                    for (int part = 0; part < contextVectors; part++)
                        value[part] = load16(v + (long)j * stride + 16 * (p0 + part));
                    for (int r = 0; r < ROWS; r++) {
                        const float p = scores[r * np + j];
                        for (int part = 0; part < contextVectors; part++) c[r][part] += p * value[part];
                    }
                }
                for (int r = 0; r < rows; r++)
                    for (int part = 0; part < contextVectors; part++)
                        store16(context + (long)(i0 + r) * contextStride + head * D + 16 * (p0 + part),
                                c[r][part] * inverse[r]);
            }
        }
    }
}
