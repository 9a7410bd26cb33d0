// OpenBLAS's CBLAS interface (cblas_sgemm), its thread control (openblas_set_num_threads) and the name of the
// kernels it chose at load (openblas_get_corename).
// Debian ships no cblas.pc: pkg-config `openblas` puts openblas-pthread/ first on the include path.
#include <cblas.h>

// What the CPU (and the kernel, which must save the wide registers) offers, for choosing OpenBLAS's kernels
// when its own detection does not know the CPU (Sources/SluiceEmbed/MiniLM/OpenBLASCore.swift).
// 2: AVX-512 as OpenBLAS's SkylakeX kernels use it (F, BW, DQ, VL, CD); 1: AVX2 with FMA; 0: neither, or not x86-64.
static inline int sluice_openblas_cpu_level(void) {
#if defined(__x86_64__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq")
        && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512cd"))
        return 2;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return 1;
#endif
    return 0;
}
