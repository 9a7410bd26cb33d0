#include "CMiniLMKernels.h"
#include "support.h"

// The int8 matrix product C (+)= A · Wᵀ with A quantized per row (uint8, scale and offset) and W per output
// channel (int7 in int8, packed by sluice_minilm_int8_pack_weights): integer dot products, then
// c[i, j] = scale_i · wscale_j · Σ a·w + offset_i · wscale_j · Σ w. Three kernels compute the same
// exact integer sums: AVX-512 VNNI (vpdpbusd), AVX2 (vpmaddubsw + vpmaddwd) and portable C. The caller
// picks one once (sluice_minilm_int8_best_kernel at load); the wide ones are compiled only into their own
// functions (target attributes), so the library runs on any x86-64.

#define BLOCK SLUICE_MINILM_INT8_BLOCK
#define ROW_PANEL 96  // rows whose quantized activations stay in L2 while every column tile passes over them

static inline int32_t load4(const uint8_t *p) {
    int32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

// The portable kernel: one row × one block of 16 channels at a time, the block's 64 products of a group
// of 4 inputs in 64 lanes (a loop the compiler vectorizes), summed per channel at the end.
static void multiply_portable(
    const uint8_t *a, const float *rowScales, const float *rowOffsets, int m, int k, const int8_t *packed,
    const float *scales, const float *scaledSums, int n, float *c, int ldc, int accumulate) {
    for (int i = 0; i < m; i++) {
        const uint8_t *row = a + (long)i * k;
        for (int b = 0; b < n / BLOCK; b++) {
            const int8_t *w = packed + (long)b * BLOCK * k;
            int32_t products[4 * BLOCK] = {0};
            for (int g = 0; g < k / 4; g++) {
                const uint8_t *x = row + 4 * g;
                const int8_t *group = w + (long)g * 4 * BLOCK;
                for (int l = 0; l < 4 * BLOCK; l++) products[l] += (int32_t)x[l % 4] * group[l];
            }
            float *out = c + (long)i * ldc + b * BLOCK;
            for (int lane = 0; lane < BLOCK; lane++) {
                const int j = b * BLOCK + lane;
                const int32_t sum =
                    products[4 * lane] + products[4 * lane + 1] + products[4 * lane + 2] + products[4 * lane + 3];
                // The wide kernels' epilogue, rounding for rounding (one fused multiply-add): the offset term
                // nearly cancels the product term, so a different rounding order shows in the vectors.
                const float v = fmaf((float)sum, scales[j] * rowScales[i], scaledSums[j] * rowOffsets[i]);
                out[lane] = accumulate ? out[lane] + v : v;
            }
        }
    }
}

#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
#include <immintrin.h>

#define TARGET_VNNI __attribute__((target("avx512f,avx512bw,avx512vnni")))
#define TARGET_AVX2 __attribute__((target("avx2,fma")))
#define INLINE static inline __attribute__((always_inline))

// Asks for the lines of a tile's outputs (rows × width floats from c[i0, j]) before its products, so that
// fetching them (for writing, and for reading when accumulating) overlaps the arithmetic: without it the
// tile's stores waited on those lines, most of them in neither L1 nor L2.
INLINE void prefetch_tile(const float *c, int i0, int rows, int j, int width, int ldc) {
    for (int r = 0; r < rows; r++) {
        const float *out = c + (long)(i0 + r) * ldc + j;
        for (int x = 0; x < width; x += 16) __builtin_prefetch(out + x, 1, 3);
        __builtin_prefetch(out + width - 1, 1, 3);
    }
}

// AVX-512 VNNI: a tile of VNNI_ROWS rows × nb blocks of 16 channels (nb 1 or 2), k / 4 steps of one
// vpdpbusd per row and block (4 uint8 × int8 products per channel, added to int32).
#define VNNI_ROWS 6

TARGET_VNNI INLINE void tile_avx512vnni(
    const uint8_t *a, int i0, int rows, int k, const int8_t *w, int nb, const float *rowScales,
    const float *rowOffsets, const float *scales, const float *scaledSums, int j0, float *c, int ldc,
    int accumulate) {
    const uint8_t *row[VNNI_ROWS];
    for (int r = 0; r < VNNI_ROWS; r++) row[r] = a + (long)(i0 + (r < rows ? r : 0)) * k;
    prefetch_tile(c, i0, rows, j0, nb * BLOCK, ldc);
    __m512i sums[VNNI_ROWS][2];
    for (int r = 0; r < VNNI_ROWS; r++) sums[r][0] = sums[r][1] = _mm512_setzero_si512();
    const int8_t *w1 = w + (long)BLOCK * k;
    for (int g = 0; g < k / 4; g++) {
        const __m512i b0 = _mm512_loadu_si512((const void *)(w + 64L * g));
        const __m512i b1 = nb > 1 ? _mm512_loadu_si512((const void *)(w1 + 64L * g)) : b0;
        for (int r = 0; r < VNNI_ROWS; r++) {
            const __m512i x = _mm512_set1_epi32(load4(row[r] + 4 * g));
            sums[r][0] = _mm512_dpbusd_epi32(sums[r][0], x, b0);
            if (nb > 1) sums[r][1] = _mm512_dpbusd_epi32(sums[r][1], x, b1);
        }
    }
    for (int r = 0; r < rows; r++) {
        const __m512 rowScale = _mm512_set1_ps(rowScales[i0 + r]);
        const __m512 rowOffset = _mm512_set1_ps(rowOffsets[i0 + r]);
        for (int b = 0; b < nb; b++) {
            const int j = j0 + b * BLOCK;
            float *out = c + (long)(i0 + r) * ldc + j;
            __m512 v = _mm512_fmadd_ps(
                _mm512_cvtepi32_ps(sums[r][b]), _mm512_mul_ps(_mm512_loadu_ps(scales + j), rowScale),
                _mm512_mul_ps(_mm512_loadu_ps(scaledSums + j), rowOffset));
            if (accumulate) v = _mm512_add_ps(v, _mm512_loadu_ps(out));
            _mm512_storeu_ps(out, v);
        }
    }
}

TARGET_VNNI static void multiply_avx512vnni(
    const uint8_t *a, const float *rowScales, const float *rowOffsets, int m, int k, const int8_t *packed,
    const float *scales, const float *scaledSums, int n, float *c, int ldc, int accumulate) {
    for (int p0 = 0; p0 < m; p0 += ROW_PANEL) {
        const int panelEnd = p0 + ROW_PANEL < m ? p0 + ROW_PANEL : m;
        for (int j0 = 0; j0 < n; j0 += 2 * BLOCK) {
            const int8_t *w = packed + (long)j0 * k;
            for (int i0 = p0; i0 < panelEnd; i0 += VNNI_ROWS) {
                const int rows = panelEnd - i0 < VNNI_ROWS ? panelEnd - i0 : VNNI_ROWS;
                if (j0 + 2 * BLOCK <= n)
                    tile_avx512vnni(a, i0, rows, k, w, 2, rowScales, rowOffsets, scales, scaledSums, j0, c, ldc,
                                    accumulate);
                else
                    tile_avx512vnni(a, i0, rows, k, w, 1, rowScales, rowOffsets, scales, scaledSums, j0, c, ldc,
                                    accumulate);
            }
        }
    }
}

// AVX2: a tile of AVX2_ROWS rows × one block of 16 channels (two registers of 8), over k / 4 groups of 4
// inputs: vpmaddubsw (uint8 × int8 pairs to int16: never saturates with 7-bit weights), vpmaddwd (to int32)
// and an int32 add per group; or, for a pair of groups that the block's plan marks exact (their int16 sums
// cannot leave int16, sluice_minilm_int8_pair_is_exact), both groups' vpmaddubsw results added in int16
// and widened once: 3 multiplies for 2 groups instead of 4, the same integers.
#define AVX2_ROWS 4

TARGET_AVX2 INLINE void group_avx2(
    const uint8_t *const *row, int g, const int8_t *w, __m256i ones, __m256i sums[AVX2_ROWS][2]) {
    const __m256i b0 = _mm256_loadu_si256((const __m256i *)(w + 64L * g));
    const __m256i b1 = _mm256_loadu_si256((const __m256i *)(w + 64L * g + 32));
    for (int r = 0; r < AVX2_ROWS; r++) {
        const __m256i x = _mm256_set1_epi32(load4(row[r] + 4 * g));
        sums[r][0] = _mm256_add_epi32(sums[r][0], _mm256_madd_epi16(_mm256_maddubs_epi16(x, b0), ones));
        sums[r][1] = _mm256_add_epi32(sums[r][1], _mm256_madd_epi16(_mm256_maddubs_epi16(x, b1), ones));
    }
}

TARGET_AVX2 INLINE void pair_avx2(
    const uint8_t *const *row, int g, const int8_t *w, __m256i ones, __m256i sums[AVX2_ROWS][2]) {
    const __m256i b0 = _mm256_loadu_si256((const __m256i *)(w + 64L * g));
    const __m256i b1 = _mm256_loadu_si256((const __m256i *)(w + 64L * g + 32));
    const __m256i c0 = _mm256_loadu_si256((const __m256i *)(w + 64L * g + 64));
    const __m256i c1 = _mm256_loadu_si256((const __m256i *)(w + 64L * g + 96));
    for (int r = 0; r < AVX2_ROWS; r++) {
        const __m256i x = _mm256_set1_epi32(load4(row[r] + 4 * g));
        const __m256i y = _mm256_set1_epi32(load4(row[r] + 4 * g + 4));
        const __m256i s0 = _mm256_add_epi16(_mm256_maddubs_epi16(x, b0), _mm256_maddubs_epi16(y, c0));
        const __m256i s1 = _mm256_add_epi16(_mm256_maddubs_epi16(x, b1), _mm256_maddubs_epi16(y, c1));
        sums[r][0] = _mm256_add_epi32(sums[r][0], _mm256_madd_epi16(s0, ones));
        sums[r][1] = _mm256_add_epi32(sums[r][1], _mm256_madd_epi16(s1, ones));
    }
}

TARGET_AVX2 INLINE void tile_avx2(
    const uint8_t *a, int i0, int rows, int k, const int8_t *w, const uint8_t *exact, const float *rowScales,
    const float *rowOffsets, const float *scales, const float *scaledSums, int j, float *c, int ldc,
    int accumulate) {
    const uint8_t *row[AVX2_ROWS];
    for (int r = 0; r < AVX2_ROWS; r++) row[r] = a + (long)(i0 + (r < rows ? r : 0)) * k;
    prefetch_tile(c, i0, rows, j, BLOCK, ldc);
    const __m256i ones = _mm256_set1_epi16(1);
    __m256i sums[AVX2_ROWS][2];
    for (int r = 0; r < AVX2_ROWS; r++) sums[r][0] = sums[r][1] = _mm256_setzero_si256();
    // Runs of exact pairs and of the others (few and long: nearly every pair is exact in MiniLM's weights).
    const int pairs = k / 8;
    int t = 0;
    while (t < pairs) {
        for (; t < pairs && exact[t]; t++) pair_avx2(row, 2 * t, w, ones, sums);
        for (; t < pairs && !exact[t]; t++) {
            group_avx2(row, 2 * t, w, ones, sums);
            group_avx2(row, 2 * t + 1, w, ones, sums);
        }
    }
    if ((k / 4) % 2) group_avx2(row, k / 4 - 1, w, ones, sums);
    for (int r = 0; r < rows; r++) {
        const __m256 rowScale = _mm256_set1_ps(rowScales[i0 + r]);
        const __m256 rowOffset = _mm256_set1_ps(rowOffsets[i0 + r]);
        for (int h = 0; h < 2; h++) {
            float *out = c + (long)(i0 + r) * ldc + j + 8 * h;
            __m256 v = _mm256_fmadd_ps(
                _mm256_cvtepi32_ps(sums[r][h]), _mm256_mul_ps(_mm256_loadu_ps(scales + j + 8 * h), rowScale),
                _mm256_mul_ps(_mm256_loadu_ps(scaledSums + j + 8 * h), rowOffset));
            if (accumulate) v = _mm256_add_ps(v, _mm256_loadu_ps(out));
            _mm256_storeu_ps(out, v);
        }
    }
}

TARGET_AVX2 static void multiply_avx2(
    const uint8_t *a, const float *rowScales, const float *rowOffsets, int m, int k, const int8_t *packed,
    const float *scales, const float *scaledSums, int n, float *c, int ldc, int accumulate) {
    for (int p0 = 0; p0 < m; p0 += ROW_PANEL) {
        const int panelEnd = p0 + ROW_PANEL < m ? p0 + ROW_PANEL : m;
        for (int j = 0; j < n; j += BLOCK) {
            const int8_t *w = packed + (long)j * k;
            const uint8_t *exact = (const uint8_t *)packed + (long)n * k + (long)(j / BLOCK) * (k / 8);
            for (int i0 = p0; i0 < panelEnd; i0 += AVX2_ROWS) {
                const int rows = panelEnd - i0 < AVX2_ROWS ? panelEnd - i0 : AVX2_ROWS;
                tile_avx2(a, i0, rows, k, w, exact, rowScales, rowOffsets, scales, scaledSums, j, c, ldc,
                          accumulate);
            }
        }
    }
}
#endif

int sluice_minilm_int8_kernel_supported(int kernel) {
    switch (kernel) {
    case SLUICE_MINILM_INT8_PORTABLE: return 1;
#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
    case SLUICE_MINILM_INT8_AVX2:
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case SLUICE_MINILM_INT8_AVX512_VNNI:
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw")
            && __builtin_cpu_supports("avx512vnni");
#endif
    default: return 0;
    }
}

int sluice_minilm_int8_best_kernel(void) {
    if (sluice_minilm_int8_kernel_supported(SLUICE_MINILM_INT8_AVX512_VNNI)) return SLUICE_MINILM_INT8_AVX512_VNNI;
    if (sluice_minilm_int8_kernel_supported(SLUICE_MINILM_INT8_AVX2)) return SLUICE_MINILM_INT8_AVX2;
    return SLUICE_MINILM_INT8_PORTABLE;
}

void sluice_minilm_int8_multiply(
    int kernel, const uint8_t *a, const float *rowScales, const float *rowOffsets, int m, int k,
    const int8_t *packed, const float *scales, const float *scaledSums, int n, float *c, int ldc, int accumulate) {
    switch (kernel) {
#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
    case SLUICE_MINILM_INT8_AVX512_VNNI:
        multiply_avx512vnni(a, rowScales, rowOffsets, m, k, packed, scales, scaledSums, n, c, ldc, accumulate);
        return;
    case SLUICE_MINILM_INT8_AVX2:
        multiply_avx2(a, rowScales, rowOffsets, m, k, packed, scales, scaledSums, n, c, ldc, accumulate);
        return;
#endif
    default:
        multiply_portable(a, rowScales, rowOffsets, m, k, packed, scales, scaledSums, n, c, ldc, accumulate);
    }
}
