import ArgumentParser
import Foundation
import SluiceCommandLine
import SluiceCore
import SluiceEmbed

#if canImport(Glibc)
import Glibc
#endif

/// `sluice-bench`: measurements that print figures (never asserted in tests).
@main
struct SluiceBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sluice-bench",
        abstract: "Benchmarks for Sluice: prints throughput, peak RSS and per-phase tables.",
        subcommands: [
            CorpusCommand.self, PipelineBench.self, RemoteBench.self, SinkBench.self, ExtractBench.self,
            MiniLMBench.self, LocalSearchBench.self, TokenizerBench.self, ChunkBench.self, LatencyBench.self,
            TextBench.self, LocalIVFBench.self,
        ]
    )
}

extension SluiceBench {
    /// As `sluice`'s `main`, after giving OpenBLAS the kernels of this CPU where its own detection falls back to
    /// generic ones and stopping its thread pool (`OpenBLASCore`): the MiniLM benchmark measures what `sluice` runs.
    static func main() async {
        OpenBLASCore.reexecuteIfUnrecognized()
        OpenBLASCore.stopThreadPool()
        await parseAndRun()
    }
}
