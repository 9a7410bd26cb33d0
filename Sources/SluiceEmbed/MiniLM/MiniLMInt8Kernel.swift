import CMiniLMKernels
import SluiceCore

/// The integer dot-product kernel of the int8 path, chosen once when the embedder loads: AVX-512 VNNI
/// (`vpdpbusd`) where the CPU has it, else AVX2 (`vpmaddubsw` + `vpmaddwd`), else portable C. All three
/// compute the same exact integer sums; only their speed differs.
package enum MiniLMInt8Kernel: String, Sendable, CaseIterable {
    case portable
    case avx2
    case avx512VNNI = "avx512-vnni"

    /// The environment variable that forces a kernel (`portable`, `avx2`, `avx512-vnni`): for checks and
    /// benchmarks of a slower path on a CPU that has a faster one.
    package static let environmentVariable = "SLUICE_MINILM_INT8_KERNEL"

    var code: Int32 {
        switch self {
        case .portable: Int32(SLUICE_MINILM_INT8_PORTABLE)
        case .avx2: Int32(SLUICE_MINILM_INT8_AVX2)
        case .avx512VNNI: Int32(SLUICE_MINILM_INT8_AVX512_VNNI)
        }
    }

    /// Whether this CPU runs the kernel.
    package var isSupported: Bool { sluice_minilm_int8_kernel_supported(code) != 0 }

    /// The fastest kernel this CPU runs.
    package static var best: MiniLMInt8Kernel {
        let code = sluice_minilm_int8_best_kernel()
        return allCases.first { $0.code == code } ?? .portable
    }

    /// `requested`, else the one the environment variable names, else the fastest.
    /// - Throws: ``SluiceError/Code/configuration`` for an unknown kernel or one this CPU does not run.
    static func choose(_ requested: MiniLMInt8Kernel?, environment: [String: String]) throws -> MiniLMInt8Kernel {
        var kernel = requested
        if kernel == nil, let name = environment[environmentVariable], !name.isEmpty {
            guard let named = MiniLMInt8Kernel(rawValue: name) else {
                throw SluiceError(
                    .configuration,
                    "\(environmentVariable)=\(name): the int8 kernels are \(allCases.map(\.rawValue).joined(separator: ", "))"
                )
            }
            kernel = named
        }
        guard let kernel else { return best }
        guard kernel.isSupported else {
            throw SluiceError(
                .configuration,
                "the int8 kernel \(kernel.rawValue) needs an instruction set this CPU lacks"
            )
        }
        return kernel
    }
}
