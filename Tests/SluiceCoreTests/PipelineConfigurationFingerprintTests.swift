import Foundation
import SluiceTesting
import Testing

@testable import SluiceCore

/// The configuration's fingerprint and a document's metadata fingerprint are Sluice's own explicit
/// encodings, not the compiler's description of the values (issue 30).
@Suite struct PipelineConfigurationFingerprintTests {
    @Test func theEncodingIsVersionedSortedAndExplicit() throws {
        let configuration = try PipelineConfiguration.load(
            file: nil,
            overrides: ["embed.provider=hash", "chunk.max_tokens=128", "source.metadata={team: docs, year: 2026}"]
        )
        let lines = configuration.fingerprintText.split(separator: "\n").map(String.init)
        #expect(lines.first == "sluice-configuration 1")
        #expect(Array(lines.dropFirst()) == lines.dropFirst().sorted())
        #expect(lines.contains("embed.provider=\"hash\""))
        #expect(lines.contains("chunk.maxTokens=128"))
        #expect(lines.contains("embed.model=null"))
        #expect(lines.contains { $0.hasPrefix("source.metadata={\"team\":s\"docs\",\"year\":i\"2026\"}") })
        #expect(configuration.fingerprint.hasPrefix("c1:"))
        #expect(configuration.fingerprint == "c1:" + ContentHash(utf8: configuration.fingerprintText).hex)
    }

    /// How a file was written (its deprecated keys, which keys it set) is not a setting: two files that
    /// configure the same thing have one fingerprint.
    @Test func theNotesOfADecodingAreNotPartOfIt() throws {
        let old = try PipelineConfiguration.load(file: nil, overrides: ["extract.docx.max_inflated_mb=50"])
        let new = try PipelineConfiguration.load(file: nil, overrides: ["extract.zip.max_inflated_mb=50"])
        #expect(!old.notes.deprecations.isEmpty)
        #expect(old.fingerprint == new.fingerprint)
        #expect(!old.fingerprintText.contains("notes."), "\(old.fingerprintText)")
        #expect(old.fingerprintText.contains("extract.ocr.mode=\"auto\""), "\(old.fingerprintText)")
    }

    /// Every setting has an explicit form: none falls back to a description.
    @Test func noSettingIsLeftToADescription() throws {
        let configuration = try PipelineConfiguration.load(
            file: nil,
            overrides: [
                "embed.provider=openai", "embed.base_url=https://api.example.com/v1", "embed.api_key_env=KEY",
                "embed.rpm=10", "sink.kind=pgvector", "sink.url=postgresql://u@h/d", "sink.password_env=PW",
                "source.metadata={a: [x, y], b: 1.5, c: true}", "extract.pdf.password_env=P",
                "source.metadata_from_path=(?<team>[^/]+)/.*", "answer.model=m",
            ]
        )
        let text = configuration.fingerprintText
        #expect(!text.contains(FingerprintEncoder.unknownMarker), "\(text)")
        #expect(text.split(separator: "\n").count > 60)
    }

    @Test func aChangedSettingChangesTheFingerprintAndOnlyThen() throws {
        let base = try PipelineConfiguration.load(file: nil, overrides: ["source.metadata={a: 1, b: x}"])
        let same = try PipelineConfiguration.load(file: nil, overrides: ["source.metadata={b: x, a: 1}"])
        #expect(base.fingerprint == same.fingerprint)
        for override in [
            "embed.provider=hash", "chunk.overlap_tokens=3", "source.include=[\"*.md\"]", "sink.hnsw.ef_search=99",
            "extract.ocr.mode=never", "run.buffer=3", "source.metadata={a: \"1\", b: x}", "state=elsewhere",
        ] {
            let changed = try PipelineConfiguration.load(
                file: nil,
                overrides: ["source.metadata={a: 1, b: x}", override]
            )
            #expect(changed.fingerprint != base.fingerprint, "\(override)")
        }
    }

    /// `chunk.context` changes the vectors: each value has a fingerprint of its own.
    @Test func theChunkContextIsPartOfTheFingerprint() throws {
        let values = PipelineConfiguration.Chunk.Context.allCases
        let fingerprints = try values.map {
            try PipelineConfiguration.load(file: nil, overrides: ["chunk.context=\($0.rawValue)"])
        }
        #expect(Set(fingerprints.map(\.fingerprint)).count == values.count)
        for (value, configuration) in zip(values, fingerprints) {
            #expect(configuration.chunk.context == value)
            #expect(configuration.fingerprintText.contains("chunk.context=\"\(value.rawValue)\"\n"))
        }
    }

    /// A metadata value's encoding is, value for value, the text an older Sluice hashed (the description of
    /// its JSON object), so that the fingerprints in existing checkpoints stay equal after an upgrade.
    @Test(arguments: [
        MetadataValue.string("plain"), .string("a \"quoted\" 'word' \\ and \u{7} é 😀"), .int(-42), .int(0),
        .double(1.0), .double(0.1), .double(1e20), .double(-2.5e-7), .bool(true), .bool(false),
        .time(Date(timeIntervalSince1970: 1_764_000_000)), .strings([]), .strings(["a"]),
        .strings(["a\"b", "é", "\u{7}", "'", "\u{85}", "😀", "\u{200B}", "\\", "\t\n\r\0", "\u{7F}", "\u{1B}[31m"]),
        .strings(["\u{A0}", "e\u{301}", "\u{FEFF}", "\u{E000}", "\u{2028}", "\u{1F}", "x y"]),
    ])
    func metadataEncodingIsTheOlderDescription(_ value: MetadataValue) {
        #expect(value.fingerprintText == String(describing: value.jsonObject))
    }
}
