import Foundation
import SluiceCore
import Testing

/// The `extract.docx`, `extract.json` and `chunk.strategy: structured` keys.
@Suite struct PipelineConfigurationDocumentsTests {
    @Test func documentKeysAreRead() throws {
        let c = try PipelineConfiguration.load(
            file: nil,
            overrides: [
                "extract.docx.max_inflated_mb=5", "extract.docx.max_compression_ratio=50",
                "extract.json.fields=[\"$.items[*].body\", title]", "extract.json.max_depth=8",
                "chunk.strategy=structured",
            ]
        )
        #expect(c.extract.docx.maxInflatedMB == 5)
        #expect(c.extract.docx.maxCompressionRatio == 50)
        #expect(c.extract.json.fields == ["$.items[*].body", "title"])
        #expect(c.extract.json.maxDepth == 8)
        #expect(c.chunk.strategy == .structured)
        let defaults = try PipelineConfiguration.load(file: nil)
        #expect(defaults.extract.docx.maxInflatedMB == 100)
        #expect(defaults.extract.json.fields.isEmpty)
    }

    @Test(arguments: [
        ("extract.docx.max_ratio=5", "extract.docx.max_ratio"),
        ("extract.json.max_depth=0", "extract.json.max_depth"),
        ("extract.docx.max_compression_ratio=0.5", "extract.docx.max_compression_ratio"),
        ("chunk.strategy=semantic", "chunk.strategy"),
    ])
    func badDocumentKeysNameTheKey(override: String, key: String) throws {
        let error = try #require(throws: SluiceError.self) {
            try PipelineConfiguration.load(file: nil, overrides: [override])
        }
        #expect(error.code == .configuration)
        #expect(error.message.contains(key), "\(error.message)")
    }
}
