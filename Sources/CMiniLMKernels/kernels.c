#include "CMiniLMKernels.h"

#include <stdint.h>
#include <string.h>

// e^x for x in [-87.3, 88.3]: Cephes' single-precision polynomial after reduction by ln 2. The rounding
// of x·log2(e) adds and subtracts 1.5·2^23 (exact in float; this file is never built with fast-math).
static inline float sluice_exp(float x) {
    x = x < -87.3f ? -87.3f : (x > 88.3f ? 88.3f : x);
    float shifted = x * 1.44269504f + 12582912.0f;
    float n = shifted - 12582912.0f;
    int32_t bits;
    memcpy(&bits, &shifted, sizeof bits);
    int32_t integer = bits - 0x4B400000;
    float r = x - n * 0.693359375f + n * 2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * (r * r) + r + 1.0f;
    int32_t exponent = (integer + 127) << 23;
    float scale;
    memcpy(&scale, &exponent, sizeof scale);
    return p * scale;
}

static inline float sluice_gelu(float x) {
    float z = x * 0.70710678f;
    float a = z < 0 ? -z : z;
    float t = 1.0f / (1.0f + 0.3275911f * a);
    float p = 1.061405429f;
    p = p * t - 1.453152027f;
    p = p * t + 1.421413741f;
    p = p * t - 0.284496736f;
    p = p * t + 0.254829592f;
    float e = 1.0f - p * t * sluice_exp(-a * a);
    float erf = z < 0 ? -e : e;
    return 0.5f * x * (1.0f + erf);
}

#define LANES 16

// Built for the machine's vector width where the loader can choose (x86-64 Linux: AVX-512, AVX2
// or the SSE2 baseline, picked once at load time); elsewhere the default build.
#if defined(__x86_64__) && defined(__linux__) && defined(__clang__)
#define SLUICE_CLONES __attribute__((target_clones("avx512f,avx2,default")))
#else
#define SLUICE_CLONES
#endif

// The sum of n floats in LANES partial sums (which the compiler keeps in vector registers).
static inline float sluice_sum(const float *row, int n) {
    float sums[LANES] = {0};
    int vectorEnd = n - n % LANES;
    for (int i = 0; i < vectorEnd; i += LANES)
        for (int j = 0; j < LANES; j++) sums[j] += row[i + j];
    float total = 0;
    for (int j = 0; j < LANES; j++) total += sums[j];
    for (int i = vectorEnd; i < n; i++) total += row[i];
    return total;
}

SLUICE_CLONES void sluice_minilm_layer_norm(float *row, const float *bias, const float *gamma, const float *beta, int n, float epsilon) {
    if (bias) {
        for (int i = 0; i < n; i++) row[i] += bias[i];
    }
    float mean = sluice_sum(row, n) / (float)n;
    int vectorEnd = n - n % LANES;
    float squares[LANES] = {0};
    for (int i = 0; i < vectorEnd; i += LANES)
        for (int j = 0; j < LANES; j++) {
            float c = row[i + j] - mean;
            squares[j] += c * c;
        }
    float square = 0;
    for (int j = 0; j < LANES; j++) square += squares[j];
    for (int i = vectorEnd; i < n; i++) square += (row[i] - mean) * (row[i] - mean);
    float inverse = 1.0f / __builtin_sqrtf(square / (float)n + epsilon);
    for (int i = 0; i < n; i++) row[i] = (row[i] - mean) * inverse * gamma[i] + beta[i];
}

SLUICE_CLONES void sluice_minilm_bias_gelu(float *values, int rows, int columns, const float *bias) {
    for (int r = 0; r < rows; r++) {
        float *row = values + (long)r * columns;
        for (int i = 0; i < columns; i++) row[i] = sluice_gelu(row[i] + bias[i]);
    }
}

SLUICE_CLONES void sluice_minilm_softmax(float *values, int rows, int n) {
    for (int r = 0; r < rows; r++) {
        float *row = values + (long)r * n;
        float maximum = row[0];
        for (int i = 1; i < n; i++) maximum = row[i] > maximum ? row[i] : maximum;
        for (int i = 0; i < n; i++) row[i] = sluice_exp(row[i] - maximum);
        float inverse = 1.0f / sluice_sum(row, n);
        for (int i = 0; i < n; i++) row[i] *= inverse;
    }
}
