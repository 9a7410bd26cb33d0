import Foundation
import SluiceCore
import SluiceState
import SluiceTesting
import Testing

@testable import SluicePipeline

/// docs/DESIGN.md §11: a document that failed for a reason that cannot change while its bytes and the
/// settings stay the same is not retried (the run exits 0 for it), until the file or the settings
/// change or `--retry-failed`; transient failures are always retried.
@Suite struct KnownFailureTests {
    @Test func aPermanentFailureIsSkippedUntilTheFileOrTheSettingsChange() async throws {
        var harness = try PipelineHarness()
        defer { harness.cleanUp() }
        try TestCorpus.writeTextDocuments(count: 4, into: harness.source)
        let binary = harness.source.appendingPathComponent("blob.txt")
        try Data([0x00, 0x01, 0x02, 0xFF] + Array(repeating: UInt8(0), count: 64)).write(to: binary)
        try Data().write(to: harness.source.appendingPathComponent("empty.txt"))

        let first = try await harness.run()
        #expect(first.documentsFailed == 2 && first.exitCode == .documentsFailed)
        #expect(try harness.record("blob.txt")?.knownFailure != nil)

        // Nothing changed: both are known failures, skipped; the run succeeds.
        let second = try await harness.run()
        #expect(second.documentsFailed == 0 && second.documentsKnownFailures == 2)
        #expect(second.documentsSkipped == 6 && second.exitCode == .success)

        // Touched, same bytes: read and hashed, still known.
        try FileManager.default.setAttributes(
            [.modificationDate: Date(timeIntervalSince1970: 1_790_000_000)],
            ofItemAtPath: binary.path
        )
        let touched = try await harness.run()
        #expect(touched.documentsFailed == 0 && touched.documentsKnownFailures == 2)

        // --retry-failed retries them (and they fail again).
        var retryOptions = RunOptions()
        retryOptions.retryFailed = true
        let retried = try await harness.run(retryOptions)
        #expect(retried.documentsFailed == 2 && retried.documentsKnownFailures == nil)

        // A setting a failure may depend on changes: retried once, then known again.
        harness.configuration.extract.maxFileMB = 100
        let afterSettings = try await harness.run()
        #expect(afterSettings.documentsFailed == 2)
        #expect(try await harness.run().documentsKnownFailures == 2)

        // Fixed bytes: indexed.
        try Data("Now it is text.".utf8).write(to: binary)
        let fixed = try await harness.run()
        #expect(fixed.documentsUpserted == 1 && fixed.documentsFailed == 0)
        #expect(harness.sink.records.contains { $0.documentKey == "blob.txt" })
    }

    /// Issue 37: a change of a setting that cannot change how the bytes fail (how text is cut, the
    /// pipeline's metadata, another format's extraction settings) leaves the known failures known: the run
    /// after it does not retry them (and does not exit 2 for them).
    @Test func settingsAFailureCannotDependOnDoNotRetryIt() async throws {
        var harness = try PipelineHarness()
        defer { harness.cleanUp() }
        try TestCorpus.writeTextDocuments(count: 2, into: harness.source)
        let binary = harness.source.appendingPathComponent("blob.txt")
        try Data([0x00, 0x01, 0x02, 0xFF] + Array(repeating: UInt8(0), count: 64)).write(to: binary)
        try Data().write(to: harness.source.appendingPathComponent("empty.txt"))

        let first = try await harness.run()
        #expect(first.documentsFailed == 2, "\(first)")

        let changes: [(String, (inout PipelineConfiguration) -> Void)] = [
            ("chunk.max_tokens", { $0.chunk.maxTokens = 77 }),
            ("chunk.overlap_tokens", { $0.chunk.overlapTokens = 3 }),
            ("source.metadata", { $0.source.metadata = ["team": .string("blue")] }),
            ("extract.pdf.strip_headers", { $0.extract.pdf.stripHeadersFooters.toggle() }),
            ("extract.ocr.dpi", { $0.extract.ocr.dpi = 150 }),
        ]
        for (name, change) in changes {
            change(&harness.configuration)
            let after = try await harness.run()
            #expect(after.documentsFailed == 0, "after a change of \(name) the known failures were retried")
            #expect(after.documentsKnownFailures == 2, "after a change of \(name): \(after)")
            #expect(after.exitCode == .success, "after a change of \(name)")
        }
    }

    @Test func aTransientFailureIsRetriedOnTheNextRun() async throws {
        let harness = try PipelineHarness()
        defer { harness.cleanUp() }
        try TestCorpus.writeTextDocuments(count: 3, into: harness.source)
        harness.sink.failNextUpserts(100)
        let first = try await harness.run()
        #expect(first.documentsFailed == 3)
        let failed = try #require(try harness.record("group1/doc1.txt"))
        #expect(failed.status == .failed && failed.knownFailure == nil)
        harness.sink.failNextUpserts(0)
        let second = try await harness.run()
        #expect(second.documentsUpserted == 3 && second.documentsKnownFailures == nil)
    }
}
