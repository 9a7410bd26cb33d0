#include "CMiniLMKernels.h"
#include "support.h"

// Quantization for the int8 path: weights once at load (per output channel, symmetric, 7 bits), activations
// per row at run time (asymmetric, 8 bits). 7-bit weights against 8-bit activations keep every pair of
// products within int16 (2 · 255 · 63 = 32,130 < 32,767), so AVX2's vpmaddubsw never saturates and every
// kernel computes the same exact integer sums. The AVX2 kernel also adds two groups' int16 pair sums before
// widening them where the weights make that exact, which the packing decides once (the plan below).

long sluice_minilm_int8_packed_count(int n, int k) {
    return (long)n * k + (long)(n / SLUICE_MINILM_INT8_BLOCK) * (k / 8);
}

// Whether groups g and g + 1 of a block (16 channels × 4 inputs each) can have their vpmaddubsw results
// added in int16 before widening: in each of the block's 32 int16 lanes (channel, pair of inputs) the four
// weights' products with activations in [0, 255] sum to at most 255 · (sum of the positive weights) and at
// least −255 · (sum of the magnitudes of the negative ones), so both sums ≤ 128 keep every possible sum
// within int16 (255 · 128 = 32,640 ≤ 32,767; 255 · 129 = 32,895 is not).
int sluice_minilm_int8_pair_is_exact(const int8_t *first, const int8_t *second) {
    for (int lane = 0; lane < 2 * SLUICE_MINILM_INT8_BLOCK; lane++) {
        const int8_t w[4] = {first[2 * lane], first[2 * lane + 1], second[2 * lane], second[2 * lane + 1]};
        int positive = 0, negative = 0;
        for (int e = 0; e < 4; e++) {
            if (w[e] > 0) positive += w[e];
            else negative -= w[e];
        }
        if (positive > 128 || negative > 128) return 0;
    }
    return 1;
}

long sluice_minilm_int8_exact_pairs(const int8_t *packed, int n, int k) {
    const uint8_t *plan = (const uint8_t *)packed + (long)n * k;
    long count = 0;
    for (long i = 0; i < (long)(n / SLUICE_MINILM_INT8_BLOCK) * (k / 8); i++) count += plan[i];
    return count;
}

void sluice_minilm_int8_pack_weights(
    const float *weights, int n, int k, int8_t *packed, float *scales, float *scaledSums) {
    for (int j = 0; j < n; j++) {
        const float *row = weights + (long)j * k;
        float largest = 0;
        for (int c = 0; c < k; c++) {
            float a = row[c] < 0 ? -row[c] : row[c];
            largest = a > largest ? a : largest;
        }
        const float scale = largest > 0 ? largest / SLUICE_MINILM_INT8_WEIGHT_MAX : 1.0f;
        const float inverse = 1.0f / scale;
        // Block j / 16 of 16 channels holds k / 4 groups of 64 bytes: channel j % 16's 4 consecutive inputs.
        int8_t *block = packed + (long)(j / SLUICE_MINILM_INT8_BLOCK) * SLUICE_MINILM_INT8_BLOCK * k;
        const int lane = j % SLUICE_MINILM_INT8_BLOCK;
        int sum = 0;
        for (int c = 0; c < k; c++) {
            float x = row[c] * inverse;
            int q = (int)(x < 0 ? x - 0.5f : x + 0.5f);
            q = q > SLUICE_MINILM_INT8_WEIGHT_MAX ? SLUICE_MINILM_INT8_WEIGHT_MAX : q;
            q = q < -SLUICE_MINILM_INT8_WEIGHT_MAX ? -SLUICE_MINILM_INT8_WEIGHT_MAX : q;
            block[(long)(c / 4) * 4 * SLUICE_MINILM_INT8_BLOCK + lane * 4 + c % 4] = (int8_t)q;
            sum += q;
        }
        scales[j] = scale;
        scaledSums[j] = scale * (float)sum;
    }
    // The AVX2 kernel's plan, after the blocks: per block, one byte per pair of groups (2t, 2t + 1), 1 where
    // their int16 sums can be added exactly (see sluice_minilm_int8_pair_is_exact).
    uint8_t *plan = (uint8_t *)packed + (long)n * k;
    for (int b = 0; b < n / SLUICE_MINILM_INT8_BLOCK; b++) {
        const int8_t *block = packed + (long)b * SLUICE_MINILM_INT8_BLOCK * k;
        for (int t = 0; t < k / 8; t++)
            plan[(long)b * (k / 8) + t] = (uint8_t)sluice_minilm_int8_pair_is_exact(
                block + (long)(2 * t) * 4 * SLUICE_MINILM_INT8_BLOCK,
                block + (long)(2 * t + 1) * 4 * SLUICE_MINILM_INT8_BLOCK);
    }
}

SLUICE_CLONED(
    sluice_minilm_int8_quantize_rows,
    (const float *rows, int m, int k, int stride, uint8_t *quantized, float *scales, float *offsets),
    (rows, m, k, stride, quantized, scales, offsets)) {
    for (int r = 0; r < m; r++) {
        const float *row = rows + (long)r * stride;
        // Minimum and maximum of 16-lane minima and maxima, in explicit vectors: written as plain loops over
        // LANES partial results, they were vectorized across the lanes with shuffles and masks, 80% of
        // this function's time.
        float low = row[0], high = row[0];
        int i = 0;
        if (k >= 16) {
            sluice_v16 lows = load16(row), highs = lows;
            for (i = 16; i + 16 <= k; i += 16) {
                const sluice_v16 x = load16(row + i);
                lows = __builtin_elementwise_min(lows, x);
                highs = __builtin_elementwise_max(highs, x);
            }
            for (int j = 0; j < 16; j++) {
                low = lows[j] < low ? lows[j] : low;
                high = highs[j] > high ? highs[j] : high;
            }
        }
        for (; i < k; i++) {
            low = row[i] < low ? row[i] : low;
            high = row[i] > high ? row[i] : high;
        }
        const float scale = high > low ? (high - low) / 255.0f : 1.0f;
        const float inverse = 1.0f / scale;
        uint8_t *out = quantized + (long)r * k;
        // x ≥ low, so rounding is adding one half and truncating; the clamp guards the top's rounding.
        for (int i = 0; i < k; i++) {
            float q = (row[i] - low) * inverse + 0.5f;
            q = q > 255.0f ? 255.0f : q;
            out[i] = (uint8_t)(int)q;
        }
        scales[r] = scale;
        offsets[r] = low;
    }
}
