import ArgumentParser
import Foundation
import SluiceEmbed

#if canImport(Glibc)
import Glibc
#endif

/// `sluice blas-core` (hidden): prints the kernels OpenBLAS runs in this process and why, and whether its thread pool
/// runs, for tests.
struct OpenBLASCoreCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "blas-core",
        abstract: "Internal: print OPENBLAS_CORETYPE, the kernels OpenBLAS chose, and the CPU's level.",
        shouldDisplay: false
    )

    func run() throws {
        let variable = ProcessInfo.processInfo.environment[OpenBLASCore.environmentVariable] ?? "unset"
        let pool = OpenBLASCore.threadPoolRunning.map { $0 ? "running" : "stopped" } ?? "none"
        print(
            "\(OpenBLASCore.environmentVariable)=\(variable) core=\(OpenBLASCore.current) cpu-level=\(OpenBLASCore.cpuLevel) thread-pool=\(pool) pid=\(getpid())"
        )
    }
}
