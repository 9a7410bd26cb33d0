#if canImport(Accelerate)
import Accelerate
#else
import COpenBLAS
#endif

/// The one BLAS routine the encoder needs, `cblas_sgemm` (row-major), from OpenBLAS on Linux and from
/// Accelerate on Apple platforms. `package` for the MiniLM benchmark (`Benchmarks/SluiceBench`), which
/// measures the machine's sgemm peak with the same call.
package enum BLAS {
    /// Makes BLAS single-threaded: parallelism comes from the embedder's own workers, so BLAS threads
    /// never spin against them (or against OCR and PDF work).
    package static func useOneThread() {
        #if !canImport(Accelerate)
        openblas_set_num_threads(1)
        #endif
    }

    /// `C = A · Bᵀ + beta · C` (row-major): A is m×k (row stride `lda`), B is n×k (row stride `ldb`),
    /// C is m×n (row stride `ldc`).
    @inline(__always)
    package static func multiplyTransposed(
        m: Int,
        n: Int,
        k: Int,
        _ a: UnsafePointer<Float>,
        lda: Int,
        _ b: UnsafePointer<Float>,
        ldb: Int,
        beta: Float,
        _ c: UnsafeMutablePointer<Float>,
        ldc: Int
    ) {
        cblas_sgemm(
            CblasRowMajor,
            CblasNoTrans,
            CblasTrans,
            Int32(m),
            Int32(n),
            Int32(k),
            1,
            a,
            Int32(lda),
            b,
            Int32(ldb),
            beta,
            c,
            Int32(ldc)
        )
    }
}
