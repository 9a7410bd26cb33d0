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

#include <dlfcn.h>

// OpenBLAS's own thread pool (driver/others/blas_server.c), which libopenblas starts when it is loaded: one thread
// a core but one, each spinning on `sched_yield` for about 2^28 cycles (~0.1 s) waiting for work before it sleeps.
// Its entry points are exported but not declared in cblas.h, and a serial or OpenMP build of the library may lack
// them, so they are looked up at run time.

/// Whether OpenBLAS's thread pool is running in this process (`blas_server_avail`): 1, 0, or -1 when this build of
/// the library has no such pool.
static inline int sluice_openblas_thread_pool_running(void) {
    int *available = (int *)dlsym(RTLD_DEFAULT, "blas_server_avail");
    return available ? (*available != 0) : -1;
}

/// Makes OpenBLAS single-threaded and stops its thread pool (`blas_thread_shutdown_`: each thread is told to
/// exit, woken and joined). A call with one thread (the only kind Sluice makes) never starts the pool again.
static inline void sluice_openblas_stop_thread_pool(void) {
    openblas_set_num_threads(1);
    int (*shutdown)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "blas_thread_shutdown_");
    if (shutdown) shutdown();
}
