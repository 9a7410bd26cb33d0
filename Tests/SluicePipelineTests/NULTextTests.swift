import Foundation
import SluiceCore
import SluiceExtract
import SluiceTesting
import Testing

@testable import SluicePipeline

/// U+0000 never reaches a store: PostgreSQL's `text` and `jsonb` cannot hold it (the pgvector sink dropped it
/// there alone, so one store's text differed from the others'), and it carries nothing a reader searches for.
/// The extract stage removes it from every extraction — text, headings and metadata — so every store keeps
/// the same text and the same chunk hashes.
@Suite struct NULTextTests {
    @Test func nulIsRemovedFromExtractedTextBeforeAnyStoreSeesIt() async throws {
        var harness = try PipelineHarness()
        defer { harness.cleanUp() }
        harness.extractors = ExtractorRegistry.standard(configuration: harness.configuration.extract)
        let lines = [
            #"{"title": "nul\u0000title", "body": "before\u0000after, a line of JSON with a NUL escaped inside it"}"#,
            #"{"title": "plain", "body": "a second record without one"}"#,
        ]
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(
            to: harness.source.appendingPathComponent("records.jsonl")
        )

        let stats = try await harness.run()
        #expect(stats.documentsFailed == 0 && stats.documentsUpserted == 1, "\(stats)")
        let records = harness.sink.records.filter { $0.documentKey == "records.jsonl" }
        #expect(!records.isEmpty)
        #expect(records.contains { $0.text.contains("beforeafter") }, "\(records.map(\.text))")
        for record in records {
            #expect(!record.text.utf8.contains(0), "\(record.text)")
            for (key, value) in record.metadata {
                #expect(!key.utf8.contains(0) && !value.description.utf8.contains(0), "\(key): \(value)")
            }
        }
    }
}
