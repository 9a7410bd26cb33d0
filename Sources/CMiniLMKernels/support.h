// What the kernels share: e^x, a vectorized sum, and the per-CPU clones. Private to CMiniLMKernels.
#ifndef SLUICE_MINILM_SUPPORT_H
#define SLUICE_MINILM_SUPPORT_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

// e^x for x in [-87.3, 88.3]: Cephes' single-precision polynomial after reduction by ln 2. The rounding
// of x·log2(e) adds and subtracts 1.5·2^23 (exact in float; this file is never built with fast-math).
// Two copies of one body: `sluice_exp` lets the compiler fuse a product and a sum into one multiply-add
// where the clone has FMA (GELU's, as it always has); `sluice_exp_baseline` rounds as this architecture's
// baseline build does in whatever clone it is inlined into (x86-64's baseline has no FMA, so never fused
// there). Softmax uses the latter: it was built for the baseline only until it moved into the attention
// kernel's clones, and the fp32 vectors stay bit for bit what they were.
#if defined(__x86_64__)
#define SLUICE_BASELINE_CONTRACT "clang fp contract(off)"
#else
#define SLUICE_BASELINE_CONTRACT "clang fp contract(on)"
#endif
#define SLUICE_EXP_DEFINITION(name, contract)                                                                 \
    static inline __attribute__((always_inline)) float name(float x) {                                        \
        _Pragma(contract)                                                                                     \
        x = x < -87.3f ? -87.3f : (x > 88.3f ? 88.3f : x);                                                    \
        float shifted = x * 1.44269504f + 12582912.0f;                                                        \
        float n = shifted - 12582912.0f;                                                                      \
        int32_t bits;                                                                                         \
        memcpy(&bits, &shifted, sizeof bits);                                                                 \
        int32_t integer = bits - 0x4B400000;                                                                  \
        float r = x - n * 0.693359375f + n * 2.12194440e-4f;                                                  \
        float p = 1.9875691500e-4f;                                                                           \
        p = p * r + 1.3981999507e-3f;                                                                         \
        p = p * r + 8.3334519073e-3f;                                                                         \
        p = p * r + 4.1665795894e-2f;                                                                         \
        p = p * r + 1.6666665459e-1f;                                                                         \
        p = p * r + 5.0000001201e-1f;                                                                         \
        p = p * (r * r) + r + 1.0f;                                                                           \
        int32_t exponent = (integer + 127) << 23;                                                             \
        float scale;                                                                                          \
        memcpy(&scale, &exponent, sizeof scale);                                                              \
        return p * scale;                                                                                     \
    }
SLUICE_EXP_DEFINITION(sluice_exp, "clang fp contract(on)")
SLUICE_EXP_DEFINITION(sluice_exp_baseline, SLUICE_BASELINE_CONTRACT)

#define LANES 16

// The compiler's generic 16-float vector: one AVX-512 register in that clone, two AVX2 or four SSE
// registers in the others.
typedef float sluice_v16 __attribute__((vector_size(64)));
// The same vector at any float's alignment, for loads and stores (macros, not functions: a vector
// argument or result would change the ABI between the clones).
typedef float sluice_v16u __attribute__((vector_size(64), aligned(4), may_alias));
#define load16(p) (*(const sluice_v16u *)(p))
#define store16(p, v) (*(sluice_v16u *)(p) = (v))

// Built for each vector width where the CPU can choose (x86-64 Linux: AVX-512, AVX2 or the SSE2 baseline),
// and run at the widest the CPU has, chosen once (sluice_minilm_vector_level: the same choice the loader made
// when these were `target_clones`, except that SLUICE_MINILM_VECTOR_WIDTH=avx2|baseline can lower it, to
// measure on an AVX-512 machine what an AVX2-only CPU runs); elsewhere the default build. Use:
//     SLUICE_CLONED(name, (parameters), (arguments)) { body }
// `name` is the public function; each width's copy inlines the body.
#if defined(__x86_64__) && defined(__linux__) && defined(__clang__)
int sluice_minilm_vector_level(void);
#define SLUICE_CLONED(name, params, args)                                                                     \
    static inline __attribute__((always_inline)) void name##_body params;                                     \
    __attribute__((target("avx512f"))) static void name##_avx512 params { name##_body args; }                 \
    __attribute__((target("avx2"))) static void name##_avx2 params { name##_body args; }                      \
    static void name##_baseline params { name##_body args; }                                                  \
    void name params {                                                                                        \
        switch (sluice_minilm_vector_level()) {                                                               \
        case 2: name##_avx512 args; return;                                                                   \
        case 1: name##_avx2 args; return;                                                                     \
        default: name##_baseline args; return;                                                                \
        }                                                                                                     \
    }                                                                                                         \
    static inline __attribute__((always_inline)) void name##_body params
// The same, with the body told whether its vectors of 16 floats are one register each (`wide`: 1 in the
// AVX-512 copy, 0 in the others, where they are two AVX2 or four SSE registers), for register blocking that
// fits each width's 16 or 32 registers. Use:
//     SLUICE_CLONED_WIDE(name, (parameters), (arguments)) { body using `wide` }
#define SLUICE_UNPAREN(...) __VA_ARGS__
#define SLUICE_CLONED_WIDE(name, params, args)                                                                \
    static inline __attribute__((always_inline)) void name##_body(const int wide, SLUICE_UNPAREN params);     \
    __attribute__((target("avx512f"))) static void name##_avx512 params { name##_body(1, SLUICE_UNPAREN args); } \
    __attribute__((target("avx2"))) static void name##_avx2 params { name##_body(0, SLUICE_UNPAREN args); }   \
    static void name##_baseline params { name##_body(0, SLUICE_UNPAREN args); }                               \
    void name params {                                                                                        \
        switch (sluice_minilm_vector_level()) {                                                               \
        case 2: name##_avx512 args; return;                                                                   \
        case 1: name##_avx2 args; return;                                                                     \
        default: name##_baseline args; return;                                                                \
        }                                                                                                     \
    }                                                                                                         \
    static inline __attribute__((always_inline)) void name##_body(const int wide, SLUICE_UNPAREN params)
#else
#define SLUICE_CLONED(name, params, args) void name params
#define SLUICE_UNPAREN(...) __VA_ARGS__
#define SLUICE_CLONED_WIDE(name, params, args)                                                                \
    static inline void name##_body(const int wide, SLUICE_UNPAREN params);                                    \
    void name params { name##_body(1, SLUICE_UNPAREN args); }                                                 \
    static inline void name##_body(const int wide, SLUICE_UNPAREN params)
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

#endif
