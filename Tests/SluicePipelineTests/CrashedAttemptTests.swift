import Foundation
import SluiceCore
import SluiceState
import SluiceTesting
import Testing

@testable import SluicePipeline

/// What a killed run leaves behind: vectors upserted and recorded as pending, but no commit.
@Suite struct CrashedAttemptTests {
    @Test("a document back to its indexed bytes after a crashed attempt of another version is rewritten, not skipped")
    func revertedDocumentAfterCrashedAttemptIsRewritten() async throws {
        let versionA = (0..<12).map { "Paragraph \($0) of the first version, with words that stay the same." }.joined(
            separator: "\n\n"
        )
        // B keeps A's first chunks word for word (so their vector ids are the same) and changes the end.
        let versionB =
            versionA + "\n\nA new closing paragraph that only the second version has, long enough to be a chunk."

        let harness = try PipelineHarness()
        defer { harness.cleanUp() }
        let file = harness.source.appendingPathComponent("doc.txt")
        try versionA.write(to: file, atomically: true, encoding: .utf8)
        _ = try await harness.run()
        let indexedA = harness.sink.records

        // A run over B elsewhere gives B's records, as the crashed attempt would have written them.
        let other = try PipelineHarness()
        defer { other.cleanUp() }
        try versionB.write(to: other.source.appendingPathComponent("doc.txt"), atomically: true, encoding: .utf8)
        _ = try await other.run()
        let recordsB = other.sink.records
        let shared = Set(recordsB.map(\.id)).intersection(indexedA.map(\.id))
        try #require(!shared.isEmpty, "the versions must share vector ids for this test to mean anything")
        #expect(
            recordsB.filter { shared.contains($0.id) } != indexedA.filter { shared.contains($0.id) },
            "shared ids carry the version's metadata"
        )

        // The crashed attempt: B's ids marked pending, B's records upserted, no commit; then the file is
        // back to A's bytes.
        do {
            let checkpoint = try CheckpointStore(directory: URL(fileURLWithPath: harness.configuration.state))
            try checkpoint.markPending([(key: "doc.txt", ids: recordsB.map(\.id))])
        }
        try await harness.sink.upsert(recordsB)
        try versionA.write(to: file, atomically: true, encoding: .utf8)

        let stats = try await harness.run()
        #expect(stats.documentsFailed == 0)
        // The file was written again, so only its mtime differs.
        #expect(
            harness.sink.records.ignoringFileTimes == indexedA.ignoringFileTimes,
            "the store equals the state before the crashed attempt"
        )
    }
}
