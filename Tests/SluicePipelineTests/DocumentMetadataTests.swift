import Foundation
import SluiceCore
import SluiceTesting
import Testing

@testable import SluicePipeline

/// Issue 16, item 1: typed metadata from the pipeline file, the document's path, its front matter and
/// its file; a change of metadata alone writes the records again without embedding anything again.
@Suite struct DocumentMetadataTests {
    private func write(_ text: String, _ key: String, in harness: PipelineHarness) throws {
        let url = harness.source.appendingPathComponent(key)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: url)
    }

    @Test func recordsCarryTypedPipelinePathAndFileMetadata() async throws {
        let harness = try PipelineHarness {
            $0.source.metadata = ["team": "docs", "reviewed": true, "tier": 2]
            $0.source.metadataFromPath = "^(?<area>[^/]+)/(?<year>[0-9]{4})/"
        }
        defer { harness.cleanUp() }
        try write(
            "Alpha beta gamma delta. " + String(repeating: "More words here. ", count: 30),
            "guides/2026/a.md",
            in: harness
        )
        try write(
            "---\ntitle: The Guide\ntags: [setup, linux]\nupdated: 2026-03-04\nversion: 3\n---\n# Start\nSome text.\n",
            "guides/2025/b.md",
            in: harness
        )
        let modified = Date(timeIntervalSince1970: 1_780_000_000)
        try FileManager.default.setAttributes(
            [.modificationDate: modified],
            ofItemAtPath: harness.source.appendingPathComponent("guides/2026/a.md").path
        )
        _ = try await harness.run()
        let a = try #require(harness.sink.records.first { $0.documentKey == "guides/2026/a.md" })
        #expect(a.metadata["team"] == "docs")
        #expect(a.metadata["reviewed"] == true)
        #expect(a.metadata["tier"] == 2)
        #expect(a.metadata["area"] == "guides")
        #expect(a.metadata["year"] == 2026)
        #expect(a.metadata["mtime"] == .time(modified))
        #expect(a.metadata["size"]?.integer ?? 0 > 500)
        #expect(a.metadata["folders"] == .strings(["guides/", "guides/2026/"]))
        #expect(a.metadata["tokens"]?.integer != nil && a.metadata["offset"]?.integer != nil)

        let b = harness.sink.records.filter { $0.documentKey == "guides/2025/b.md" }
        #expect(!b.isEmpty)
        #expect(b.allSatisfy { !$0.text.contains("tags:") }, "front matter is not chunk text")
        let first = try #require(b.first)
        #expect(first.metadata["title"] == "The Guide")
        #expect(first.metadata["tags"] == .strings(["setup", "linux"]))
        #expect(first.metadata["updated"]?.date != nil)
        #expect(first.metadata["version"] == 3)
        #expect(first.metadata["headings"] == .strings(["Start"]))
        #expect(try SearchFilter(parsing: "updated >= 2026-03-01 and tags = linux and year = 2025").matches(first))
    }

    @Test func aChangeOfMetadataAloneRewritesRecordsWithoutEmbedding() async throws {
        var harness = try PipelineHarness { $0.source.metadata = ["team": "docs"] }
        defer { harness.cleanUp() }
        try TestCorpus.writeTextDocuments(count: 6, into: harness.source)
        let first = try await harness.run()
        let embedded = harness.embedder.textsEmbedded
        #expect(first.documentsUpserted == 6)

        // Unchanged: skipped at the stat.
        let again = try await harness.run()
        #expect(again.documentsSkipped == 6 && again.documentsUpserted == 0)

        // The pipeline's values change: every record is written again, nothing is embedded again.
        harness.configuration.source.metadata = ["team": "support"]
        let changed = try await harness.run()
        #expect(changed.documentsUpserted == 6)
        #expect(harness.embedder.textsEmbedded == embedded)
        #expect(harness.sink.records.allSatisfy { $0.metadata["team"] == "support" })
        #expect(harness.sink.records.count == first.chunks)

        // A touched file (same bytes, new mtime) is skipped: mtime is the time of the bytes as indexed.
        let key = "group1/doc1.txt"
        let url = harness.source.appendingPathComponent(key)
        let indexedTime = harness.sink.records.first { $0.documentKey == key }?.metadata["mtime"]
        try FileManager.default.setAttributes(
            [.modificationDate: Date(timeIntervalSince1970: 1_790_000_000)],
            ofItemAtPath: url.path
        )
        let afterTouch = try await harness.run()
        #expect(afterTouch.documentsSkipped == 6 && afterTouch.documentsUpserted == 0)
        #expect(
            harness.sink.records.filter { $0.documentKey == key }.allSatisfy { $0.metadata["mtime"] == indexedTime }
        )

        // Changed bytes: the records carry the new mtime.
        let edited = Date(timeIntervalSince1970: 1_795_000_000)
        try Data((try String(contentsOf: url, encoding: .utf8) + "\nOne more line.\n").utf8).write(to: url)
        try FileManager.default.setAttributes([.modificationDate: edited], ofItemAtPath: url.path)
        _ = try await harness.run()
        #expect(
            harness.sink.records.filter { $0.documentKey == key }.allSatisfy { $0.metadata["mtime"] == .time(edited) }
        )
    }

    @Test func frontMatterThatIsNotAMappingStaysText() async throws {
        let harness = try PipelineHarness()
        defer { harness.cleanUp() }
        try write("---\njust a rule, then text\n", "rule.md", in: harness)
        try write("---\ntitle: only front matter\n---\n", "empty.md", in: harness)
        let stats = try await harness.run()
        #expect(stats.documentsUpserted == 1 && stats.documentsFailed == 1)
        #expect(harness.sink.records.contains { $0.documentKey == "rule.md" && $0.text.contains("just a rule") })
    }

    @Test func aPatternWithoutNamedCapturesIsAConfigurationError() throws {
        #expect(throws: SluiceError.self) {
            _ = try PipelineConfiguration.load(file: nil, overrides: ["source.metadata_from_path=^([^/]+)/"])
        }
        #expect(throws: SluiceError.self) {
            _ = try PipelineConfiguration.load(file: nil, overrides: ["source.metadata_from_path=(?<a>"])
        }
        #expect(throws: SluiceError.self) {
            _ = try PipelineConfiguration.load(file: nil, overrides: ["source.metadata={a: {b: 1}}"])
        }
        let loaded = try PipelineConfiguration.load(
            file: nil,
            overrides: ["source.metadata={team: docs, n: 2, ok: true, tags: [a, b]}"]
        )
        #expect(loaded.source.metadata == ["team": "docs", "n": 2, "ok": true, "tags": .strings(["a", "b"])])
    }
}
