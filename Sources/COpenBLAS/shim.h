// OpenBLAS's CBLAS interface (cblas_sgemm) and its thread control (openblas_set_num_threads).
// Debian ships no cblas.pc: pkg-config `openblas` puts openblas-pthread/ first on the include path.
#include <cblas.h>
