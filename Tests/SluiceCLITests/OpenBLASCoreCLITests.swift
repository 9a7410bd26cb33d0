import Foundation
import Testing

/// `sluice` runs OpenBLAS's kernels for the CPU it is on, even where OpenBLAS's own detection does not know the
/// CPU (Debian 12's 0.3.21 falls back to SSE3 `Prescott` on an Intel Xeon of family 6 model 207, which has
/// AVX-512: the fp32 MiniLM encoder then embeds 5.4 times slower). `sluice blas-core` prints what is in force.
@Suite struct OpenBLASCoreCLITests {
    /// The cores whose kernels use AVX2 or wider, as `openblas_get_corename` names them.
    static let wideCores: Set<String> = ["haswell", "skylakex", "cooperlake", "sapphirerapids", "zen", "excavator"]

    struct Report {
        var variable: String
        var core: String
        var cpuLevel: Int
        /// `running`, `stopped`, or `none` (a library without a pool).
        var threadPool: String
        init(_ line: String) throws {
            var fields: [String: String] = [:]
            for field in line.split(separator: " ") {
                let parts = field.split(separator: "=", maxSplits: 1).map(String.init)
                if parts.count == 2 { fields[parts[0]] = parts[1] }
            }
            variable = try #require(fields["OPENBLAS_CORETYPE"], "\(line)")
            core = try #require(fields["core"], "\(line)")
            cpuLevel = try #require(fields["cpu-level"].flatMap { Int($0) }, "\(line)")
            threadPool = try #require(fields["thread-pool"], "\(line)")
        }
    }

    @Test("started without OPENBLAS_CORETYPE, sluice runs kernels as wide as the CPU's AVX2 or AVX-512")
    func kernelsFitTheCPU() async throws {
        let ws = try Workspace("blas")
        defer { ws.cleanUp() }
        let result = try await ws.sluice(["blas-core"], environment: ["OPENBLAS_CORETYPE": nil])
        #expect(result.exitCode == 0, "\(result)")
        let report = try Report(result.stdout)
        if report.cpuLevel >= 1 {
            #expect(Self.wideCores.contains(report.core.lowercased()), "\(result.stdout)")
        }
        if report.cpuLevel == 0 {
            #expect(report.variable == "unset", "nothing to change on a CPU without AVX2: \(result.stdout)")
        }
    }

    /// OpenBLAS starts a pool of threads when it is loaded, one a core but one, each spinning on `sched_yield` for
    /// ~0.1 s: a short command such as `sluice status` burnt 60% more CPU, and on a many-core server each start
    /// spins every other core. Sluice never calls BLAS with more than one thread, so it stops the pool first thing.
    @Test(
        "sluice stops OpenBLAS's thread pool as it starts, whatever OPENBLAS_NUM_THREADS says",
        arguments: [nil, "1", "4"] as [String?]
    )
    func threadPoolStopped(threads: String?) async throws {
        let ws = try Workspace("blas-pool")
        defer { ws.cleanUp() }
        let result = try await ws.sluice(["blas-core"], environment: ["OPENBLAS_NUM_THREADS": threads])
        #expect(result.exitCode == 0, "\(result)")
        let report = try Report(result.stdout)
        #expect(report.threadPool == "stopped", "\(result.stdout)")
    }

    @Test("a value the user set is kept, even a narrower core")
    func usersValueIsKept() async throws {
        let ws = try Workspace("blas-user")
        defer { ws.cleanUp() }
        let result = try await ws.sluice(["blas-core"], environment: ["OPENBLAS_CORETYPE": "Prescott"])
        #expect(result.exitCode == 0, "\(result)")
        let report = try Report(result.stdout)
        #expect(report.variable == "Prescott" && report.core == "Prescott", "\(result.stdout)")
    }
}
