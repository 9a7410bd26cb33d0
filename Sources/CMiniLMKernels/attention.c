#include "CMiniLMKernels.h"
#include "support.h"

// Self-attention of one sequence, fused per head: scores, softmax and context in one pass over blocks of
// query rows, with the scores of a block kept in a few KiB (no n×n matrix goes through memory).
//
// Vectors are the compiler's generic 16-float vectors: AVX-512 in that clone, two AVX2 or four SSE
// registers in the others. The products are register-blocked: ROWS query rows × 32 keys for the scores
// (8 accumulators), ROWS rows × the 32 values of a head for the context.

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

SLUICE_CLONED(
    sluice_minilm_attention,
    (const float *qkv, int n, int stride, int heads, float *context, int contextStride, float *scratch),
    (qkv, n, stride, heads, context, contextStride, scratch)) {
    enum { D = SLUICE_MINILM_HEAD_SIZE };
    const int np = padded(n);
    const int hidden = heads * D;
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
            // Scores: query rows · keys (the queries are pre-scaled by 1/√D).
            for (int jb = 0; jb < np; jb += KEYS) {
                sluice_v16 a[ROWS][2];
                for (int r = 0; r < ROWS; r++) a[r][0] = a[r][1] = (sluice_v16){0};
                for (int c = 0; c < D; c++) {
                    const sluice_v16 k0 = load16(keysT + (long)c * np + jb);
                    const sluice_v16 k1 = load16(keysT + (long)c * np + jb + 16);
                    for (int r = 0; r < ROWS; r++) {
                        const float x = query[r][c];
                        a[r][0] += x * k0;
                        a[r][1] += x * k1;
                    }
                }
                for (int r = 0; r < ROWS; r++) {
                    store16(scores + r * np + jb, a[r][0]);
                    store16(scores + r * np + jb + 16, a[r][1]);
                }
            }
            float inverse[ROWS];
            for (int r = 0; r < ROWS; r++) inverse[r] = r < rows ? 1.0f / exponentiate(scores + r * np, n) : 0;
            // Context: the unnormalized probabilities · values, scaled by 1/sum once at the end.
            sluice_v16 c[ROWS][D / 16];
            for (int r = 0; r < ROWS; r++)
                for (int part = 0; part < D / 16; part++) c[r][part] = (sluice_v16){0};
            for (int j = 0; j < n; j++) {
                sluice_v16 value[D / 16];
                for (int part = 0; part < D / 16; part++) value[part] = load16(v + (long)j * stride + 16 * part);
                for (int r = 0; r < ROWS; r++) {
                    const float p = scores[r * np + j];
                    for (int part = 0; part < D / 16; part++) c[r][part] += p * value[part];
                }
            }
            for (int r = 0; r < rows; r++)
                for (int part = 0; part < D / 16; part++)
                    store16(context + (long)(i0 + r) * contextStride + head * D + 16 * part, c[r][part] * inverse[r]);
        }
    }
}
