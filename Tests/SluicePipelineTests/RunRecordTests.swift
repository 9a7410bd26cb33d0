import Foundation
import SluiceCore
import SluiceState
import SluiceTesting
import Testing

@testable import SluicePipeline

/// The run record says what the process did: its exit code is the one the process exits with, and a run
/// that committed every document but then failed is recorded as finished, with the reason.
@Suite struct RunRecordTests {
    @Test(
        "the sink's finishing step fails after every document was committed: the run is recorded as ended, exit 70, with the reason"
    )
    func failedSinkFinishIsRecorded() async throws {
        let harness = try PipelineHarness()
        defer { harness.cleanUp() }
        try TestCorpus.writeTextDocuments(count: 10, into: harness.source)
        harness.sink.failFinish("the HNSW build ran out of memory")
        await #expect(throws: SluiceError.self) { _ = try await harness.run() }

        let checkpoint = try CheckpointStore(
            directory: URL(fileURLWithPath: harness.configuration.state),
            readOnly: true
        )
        let run = try #require(try checkpoint.recentRuns(limit: 1).first)
        #expect(run.endedAt != nil, "recorded as not finished")
        #expect(run.exitCode == 70)
        #expect(run.failure?.contains("the HNSW build ran out of memory") == true, "\(String(describing: run.failure))")
        #expect(run.stats?.documentsUpserted == 10)
        var indexed = 0
        try checkpoint.forEachDocument { if $0.status == .indexed { indexed += 1 } }
        #expect(indexed == 10)
    }

    /// The fingerprint of the settings is an explicit encoding of them (sorted keys, a version), not the
    /// compiler's description of the configuration, which can change with Swift (issue 30).
    @Test("the run record keeps the explicit, versioned fingerprint of the configuration")
    func configurationFingerprintIsExplicit() async throws {
        let harness = try PipelineHarness()
        defer { harness.cleanUp() }
        try TestCorpus.writeTextDocuments(count: 2, into: harness.source)
        _ = try await harness.run()
        let checkpoint = try CheckpointStore(
            directory: URL(fileURLWithPath: harness.configuration.state),
            readOnly: true
        )
        let run = try #require(try checkpoint.recentRuns(limit: 1).first)
        #expect(run.configurationHash.hasPrefix("c1:"), "\(run.configurationHash)")
        #expect(run.configurationHash != ContentHash(utf8: String(describing: harness.configuration)).hex)
    }

    @Test("an error's exit code is the same for the process and for the run record")
    func exitCodesOfErrors() {
        #expect(RunExitCode(for: SluiceError(.state, "disk full")) == RunExitCode(rawValue: 70))
        #expect(RunExitCode(for: SluiceError(.sinkFailed, "disk full")) == RunExitCode(rawValue: 70))
        #expect(RunExitCode(for: SluiceError(.lockHeld, "held")) == .lockHeld)
        #expect(RunExitCode(for: SluiceError(.massDelete, "no")) == .deletionRefused)
        #expect(RunExitCode(for: SluiceError(.providerRefused, "quota")) == .providerRefused)
        #expect(RunExitCode(for: SluiceError(.stateCorrupt, "torn")) == .usage)
    }
}
