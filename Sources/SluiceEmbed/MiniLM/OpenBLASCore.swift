import Foundation

#if !canImport(Accelerate)
import COpenBLAS
#endif

#if canImport(Glibc)
import Glibc
#endif

/// Which kernels OpenBLAS runs in this process, and the fix for a CPU it does not know.
///
/// OpenBLAS (built with `DYNAMIC_ARCH`, as Debian's is) picks its kernels when it is loaded, by CPU family and
/// model. A model newer than the library falls back to a generic core: Debian 12's OpenBLAS 0.3.21 runs the SSE3
/// `Prescott` kernels on an Intel Xeon of family 6 model 207 that has AVX-512, and the fp32 MiniLM encoder then
/// embeds 5.4 times slower than with the `SkylakeX` kernels (measured 2026-11-29: 300 texts in 45.1 s against 8.3 s).
/// OpenBLAS takes its choice from `OPENBLAS_CORETYPE`, read at load only, so the executables that embed (`sluice`,
/// `sluice-serve`, `sluice-bench`) call ``reexecuteIfUnrecognized()`` first thing in `main`: when the variable is
/// absent, the CPU has AVX2 with FMA and OpenBLAS chose a core older than that, it sets the variable to the core
/// that fits (`SkylakeX` with AVX-512, else `Haswell`) and re-executes itself (same arguments, same pid). A value
/// the user set is always kept. On Apple platforms BLAS is Accelerate, and nothing here applies.
package enum OpenBLASCore {
    /// The environment variable OpenBLAS reads at load to force its kernels.
    package static let environmentVariable = "OPENBLAS_CORETYPE"

    /// OpenBLAS's cores (lowercased, as `openblas_get_corename` names them) whose kernels use AVX2 or wider.
    static let wideCores: Set<String> = ["haswell", "skylakex", "cooperlake", "sapphirerapids", "zen", "excavator"]

    /// The kernels OpenBLAS chose at load (`openblas_get_corename`), e.g. `Haswell`, `SkylakeX`, `Prescott`.
    package static var current: String {
        #if canImport(Accelerate)
        return "Accelerate"
        #else
        guard let name = openblas_get_corename() else { return "unknown" }
        return String(cString: name)
        #endif
    }

    /// Makes OpenBLAS single-threaded and stops the thread pool it started when it was loaded (one thread a core but
    /// one, each spinning on `sched_yield` for ~0.1 s waiting for work): the executables (`sluice`, `sluice-serve`,
    /// `sluice-bench`) call it first thing in `main`, after ``reexecuteIfUnrecognized()``. Sluice's parallelism comes
    /// from its own workers and BLAS always runs on one thread (`BLAS.useOneThread()`), so the pool is never used;
    /// left running, it made `sluice status` cost 82 ms of CPU instead of 49 on 2 cores, and on a machine of N cores
    /// each start spins N − 1 of them (docs/EMBEDDERS.md, "The MiniLM embedder").
    package static func stopThreadPool() {
        #if !canImport(Accelerate)
        sluice_openblas_stop_thread_pool()
        #endif
    }

    /// Whether OpenBLAS's thread pool is running in this process: true or false, nil where the library has none
    /// (Accelerate, or a serial build of OpenBLAS).
    package static var threadPoolRunning: Bool? {
        #if canImport(Accelerate)
        return nil
        #else
        switch sluice_openblas_thread_pool_running() {
        case 1: return true
        case 0: return false
        default: return nil
        }
        #endif
    }

    /// What the CPU offers: 2 for AVX-512 (as OpenBLAS's SkylakeX kernels use it), 1 for AVX2 with FMA, else 0.
    package static var cpuLevel: Int {
        #if canImport(Accelerate)
        return 0
        #else
        return Int(sluice_openblas_cpu_level())
        #endif
    }

    /// The core to force, or nil when OpenBLAS's own choice stands: a user's `OPENBLAS_CORETYPE` is kept, and a
    /// core that already uses AVX2 or wider is not second-guessed.
    package static func override(current: String, cpuLevel: Int, userValue: String?) -> String? {
        guard userValue == nil, current != "Accelerate", !wideCores.contains(current.lowercased()) else { return nil }
        switch cpuLevel {
        case 2: return "SkylakeX"
        case 1: return "Haswell"
        default: return nil
        }
    }

    /// Sets ``environmentVariable`` and re-executes the process when OpenBLAS did not recognise a CPU that has
    /// wider kernels than it chose. Returns (without exec) when nothing is to change or exec fails, in which case
    /// the process goes on with OpenBLAS's choice (slower, correct) and says so on standard error.
    package static func reexecuteIfUnrecognized() {
        let userValue = getenv(environmentVariable).map { String(cString: $0) }
        guard let core = override(current: current, cpuLevel: cpuLevel, userValue: userValue) else { return }
        setenv(environmentVariable, core, 1)
        execv("/proc/self/exe", CommandLine.unsafeArgv)
        // Only reached when exec failed.
        unsetenv(environmentVariable)
        FileHandle.standardError.write(
            Data(
                "sluice: OpenBLAS chose its \(current) kernels on a CPU with wider ones and re-executing with \(environmentVariable)=\(core) failed (\(String(cString: strerror(errno)))); the local embedder will be slower\n"
                    .utf8
            )
        )
    }
}
