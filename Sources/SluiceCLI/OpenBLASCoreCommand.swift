import ArgumentParser
import Foundation
import SluiceEmbed

#if canImport(Glibc)
import Glibc
#endif

/// `sluice blas-core` (hidden): prints the kernels OpenBLAS runs in this process and why, for tests.
struct OpenBLASCoreCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "blas-core",
        abstract: "Internal: print OPENBLAS_CORETYPE, the kernels OpenBLAS chose, and the CPU's level.",
        shouldDisplay: false
    )

    func run() throws {
        let variable = ProcessInfo.processInfo.environment[OpenBLASCore.environmentVariable] ?? "unset"
        print(
            "\(OpenBLASCore.environmentVariable)=\(variable) core=\(OpenBLASCore.current) cpu-level=\(OpenBLASCore.cpuLevel) pid=\(getpid())"
        )
    }
}
