import ArgumentParser
import Foundation
import SluiceCore

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
            TextBench.self,
        ]
    )
}
