#include "CMiniLMKernels.h"
#include "support.h"

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

SLUICE_CLONED(
    sluice_minilm_layer_norm,
    (float *row, const float *bias, const float *gamma, const float *beta, int n, float epsilon),
    (row, bias, gamma, beta, n, epsilon)) {
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

SLUICE_CLONED(
    sluice_minilm_bias_gelu, (float *values, int rows, int columns, const float *bias), (values, rows, columns, bias)) {
    for (int r = 0; r < rows; r++) {
        float *row = values + (long)r * columns;
        for (int i = 0; i < columns; i++) row[i] = sluice_gelu(row[i] + bias[i]);
    }
}

#if defined(__x86_64__) && defined(__linux__) && defined(__clang__)
int sluice_minilm_vector_level(void) {
    static int chosen = -1;
    int level = __atomic_load_n(&chosen, __ATOMIC_RELAXED);
    if (level >= 0) return level;
    __builtin_cpu_init();
    level = __builtin_cpu_supports("avx512f") ? 2 : (__builtin_cpu_supports("avx2") ? 1 : 0);
    const char *cap = getenv("SLUICE_MINILM_VECTOR_WIDTH");
    if (cap != NULL && strcmp(cap, "avx2") == 0 && level > 1) level = 1;
    if (cap != NULL && strcmp(cap, "baseline") == 0) level = 0;
    __atomic_store_n(&chosen, level, __ATOMIC_RELAXED);  // every thread computes the same value
    return level;
}
#endif
