import Foundation
import SluiceCore
import Testing

/// The `extract.zip` (formerly `extract.docx`), `extract.json` and `chunk.strategy: structured` keys.
@Suite struct PipelineConfigurationDocumentsTests {
    @Test func documentKeysAreRead() throws {
        let c = try PipelineConfiguration.load(
            file: nil,
            overrides: [
                "extract.zip.max_inflated_mb=5", "extract.zip.max_compression_ratio=50",
                "extract.json.fields=[\"$.items[*].body\", title]", "extract.json.max_depth=8",
                "chunk.strategy=structured",
            ]
        )
        #expect(c.extract.zip.maxInflatedMB == 5)
        #expect(c.extract.zip.maxCompressionRatio == 50)
        #expect(c.extract.json.fields == ["$.items[*].body", "title"])
        #expect(c.extract.json.maxDepth == 8)
        #expect(c.chunk.strategy == .structured)
        let defaults = try PipelineConfiguration.load(file: nil)
        #expect(defaults.extract.zip.maxInflatedMB == 100)
        #expect(defaults.extract.json.fields.isEmpty)
    }

    @Test(arguments: [
        ("extract.zip.max_ratio=5", "extract.zip.max_ratio"),
        ("extract.docx.max_ratio=5", "extract.docx.max_ratio"),
        ("extract.json.max_depth=0", "extract.json.max_depth"),
        ("extract.zip.max_compression_ratio=0.5", "extract.zip.max_compression_ratio"),
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

    /// The ZIP limits' first name, `extract.docx`, still works: the same values, one notice per key naming
    /// the new key, and no notice for the new name.
    @Test func deprecatedDOCXKeysDecodeToTheSameValueWithANotice() throws {
        let old = try PipelineConfiguration.load(
            file: nil,
            overrides: ["extract.docx.max_inflated_mb=5", "extract.docx.max_compression_ratio=50"]
        )
        let new = try PipelineConfiguration.load(
            file: nil,
            overrides: ["extract.zip.max_inflated_mb=5", "extract.zip.max_compression_ratio=50"]
        )
        #expect(old.extract.zip == new.extract.zip)
        #expect(old == new)
        #expect(old.extract.zip.maxInflatedMB == 5 && old.extract.zip.maxCompressionRatio == 50)
        #expect(
            old.notes.deprecations == [
                "extract.docx.max_compression_ratio is deprecated: use extract.zip.max_compression_ratio (it means the same; the old key still works)",
                "extract.docx.max_inflated_mb is deprecated: use extract.zip.max_inflated_mb (it means the same; the old key still works)",
            ]
        )
        #expect(new.notes.deprecations.isEmpty)
    }

    @Test func bothNamesOfTheZIPLimitsAreRefused() throws {
        let error = try #require(throws: SluiceError.self) {
            try PipelineConfiguration.load(
                file: nil,
                overrides: ["extract.docx.max_inflated_mb=5", "extract.zip.max_inflated_mb=6"]
            )
        }
        #expect(error.code == .configuration)
        #expect(error.message.contains("extract.zip"), "\(error.message)")
    }
}
