import Foundation
import SluiceCore
import SluiceState
import SluiceTesting
import Testing

@testable import SluiceExtract
@testable import SluicePipeline

/// docs/DESIGN.md §12: a change of the settings that shape chunks is never ignored for unchanged files;
/// the index then equals a fresh run's under the new settings, and only new texts are embedded.
@Suite struct ShapingSettingsTests {
    @Test func aChunkingChangeProcessesEveryDocumentAgainAndEqualsAFreshRun() async throws {
        var harness = try PipelineHarness()
        defer { harness.cleanUp() }
        try TestCorpus.writeTextDocuments(count: 8, into: harness.source)
        _ = try await harness.run()
        let before = Set(harness.sink.records.map(\.text))

        harness.configuration.chunk.maxTokens = 25
        harness.configuration.chunk.overlapTokens = 3
        let embeddedBefore = harness.embedder.timesEmbedded
        let stats = try await harness.run()
        #expect(stats.documentsUpserted == 8 && stats.documentsSkipped == 0)

        var fresh = try PipelineHarness()
        defer { fresh.cleanUp() }
        try TestCorpus.writeTextDocuments(count: 8, into: fresh.source)
        fresh.configuration.chunk.maxTokens = 25
        fresh.configuration.chunk.overlapTokens = 3
        _ = try await fresh.run()
        #expect(harness.sink.records.map(\.id) == fresh.sink.records.map(\.id))
        #expect(harness.sink.records.map(\.text) == fresh.sink.records.map(\.text))
        // Texts the first chunking had already embedded are not embedded again.
        for (text, count) in harness.embedder.timesEmbedded where before.contains(text) {
            #expect(count == embeddedBefore[text], "\(text.prefix(40)) embedded again")
        }

        // The same settings again: nothing to do.
        let again = try await harness.run()
        #expect(again.documentsSkipped == 8)
    }

    /// The standard extractors (PDF in process) for the harness's current settings.
    static func extractors(_ configuration: PipelineConfiguration) -> ExtractorRegistry {
        let extract = configuration.extract
        return ExtractorRegistry(extractors: [
            PDFExtractor(pdf: extract.pdf, engines: OCREnginePool(options: extract.ocr)),
            JSONExtractor(fields: extract.json.fields, maxDepth: extract.json.maxDepth),
            TextExtractor(),
        ])
    }

    static let samples = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("samples")

    /// An extraction setting reprocesses the documents whose extractor reads it, and only those (a PDF
    /// setting not the text files); chunking reprocesses every document; a dry run says the same.
    @Test func anExtractionSettingProcessesAgainOnlyTheDocumentsItsExtractorReads() async throws {
        var harness = try PipelineHarness()
        defer { harness.cleanUp() }
        try TestCorpus.writeTextDocuments(count: 3, into: harness.source)
        try FileManager.default.copyItem(
            at: Self.samples.appendingPathComponent("pdf/xz-utils-faq.pdf"),
            to: harness.source.appendingPathComponent("faq.pdf")
        )
        try #"{"title": "Sluice gates", "body": "A sluice gate holds the water back until the lock is full."}"#
            .write(to: harness.source.appendingPathComponent("gate.json"), atomically: true, encoding: .utf8)
        harness.extractors = Self.extractors(harness.configuration)
        let first = try await harness.run()
        #expect(first.documentsUpserted == 5)

        func change(_ adjust: (inout PipelineConfiguration) -> Void) async throws -> (RunStats, DryRunReport) {
            adjust(&harness.configuration)
            harness.extractors = Self.extractors(harness.configuration)
            let dry = try await harness.pipeline().dryRun()
            return (try await harness.run(), dry)
        }

        // A PDF setting: the PDF alone is read again.
        var (stats, dry) = try await change { $0.extract.pdf.joinHyphens = false }
        #expect(stats.documentsUpserted == 1 && stats.documentsSkipped == 4)
        #expect(dry.metadataChanged == ["faq.pdf"] && dry.unchanged == 4)
        #expect(try harness.record("faq.pdf")?.extractor == "pdf")
        // An OCR setting: the PDF again (its pages may be OCR'd), not the text or the JSON.
        (stats, dry) = try await change { $0.extract.ocr.dpi = 200 }
        #expect(stats.documentsUpserted == 1 && stats.documentsSkipped == 4)
        #expect(dry.metadataChanged == ["faq.pdf"])
        // The JSON fields: the JSON alone, and its records now hold only the body.
        (stats, dry) = try await change { $0.extract.json.fields = ["body"] }
        #expect(stats.documentsUpserted == 1 && stats.documentsSkipped == 4)
        #expect(dry.metadataChanged == ["gate.json"])
        let gate = harness.sink.records.filter { $0.documentKey == "gate.json" }
        #expect(!gate.isEmpty && gate.allSatisfy { !$0.text.contains("Sluice gates") })
        // Chunking shapes every document.
        (stats, dry) = try await change { $0.chunk.maxTokens = 30 }
        #expect(stats.documentsUpserted == 5 && stats.documentsSkipped == 0)
        #expect(dry.metadataChanged.count == 5)
        #expect(try await harness.run().documentsSkipped == 5)
    }

    /// A known failure (docs/DESIGN.md §11) is retried when a setting its extractor reads changes, and only then.
    @Test func aKnownFailureIsRetriedOnlyForItsExtractorsSettings() async throws {
        var harness = try PipelineHarness()
        defer { harness.cleanUp() }
        try TestCorpus.writeTextDocuments(count: 2, into: harness.source)
        for name in ["encrypted.pdf", "deep.json"] {
            try FileManager.default.copyItem(
                at: Self.samples.appendingPathComponent("bad/\(name)"),
                to: harness.source.appendingPathComponent(name)
            )
        }
        harness.extractors = Self.extractors(harness.configuration)
        #expect(try await harness.run().documentsFailed == 2)
        #expect(try harness.record("encrypted.pdf")?.knownFailure != nil)
        #expect(try harness.record("deep.json")?.knownFailure != nil)

        func change(_ adjust: (inout PipelineConfiguration) -> Void) async throws -> RunStats {
            adjust(&harness.configuration)
            harness.extractors = Self.extractors(harness.configuration)
            return try await harness.run()
        }
        // A JSON setting retries the JSON, not the PDF; a PDF setting the PDF, not the JSON.
        var stats = try await change { $0.extract.json.fields = ["body"] }
        #expect(stats.documentsFailed == 1 && stats.documentsKnownFailures == 1)
        #expect(try harness.record("encrypted.pdf")?.attempts == 1)
        stats = try await change { $0.extract.pdf.joinHyphens = false }
        #expect(stats.documentsFailed == 1 && stats.documentsKnownFailures == 1)
        #expect(try harness.record("encrypted.pdf")?.attempts == 2)
        #expect(try harness.record("deep.json")?.attempts == 2)
        // Chunking: neither (a failure to read the bytes cannot depend on how text is cut; issue 37).
        stats = try await change { $0.chunk.maxTokens = 30 }
        #expect(stats.documentsFailed == 0 && stats.documentsKnownFailures == 2)
        #expect(try harness.record("deep.json")?.attempts == 2)
    }

    /// A state written before records named their extractor: the upgrade processes nothing again (their
    /// fingerprints cover every setting, as they did), the next change of any such setting processes them
    /// all once, and from then on only the documents it concerns.
    @Test func recordsWithoutAnExtractorCoverEverySetting() async throws {
        var harness = try PipelineHarness()
        defer { harness.cleanUp() }
        // Extractors that declare the PDF settings this test changes (and read the text files).
        harness.extractors = Self.extractors(harness.configuration)
        try TestCorpus.writeTextDocuments(count: 3, into: harness.source)
        _ = try await harness.run()
        // What an older Sluice wrote: no extractor, the fingerprint over every setting.
        let rules = DocumentMetadataRules(
            configuration: harness.configuration,
            extractors: harness.extractors.extractors
        )
        let state = URL(fileURLWithPath: harness.configuration.state)
        do {
            let checkpoint = try CheckpointStore(directory: state)
            var records: [DocumentRecord] = []
            try checkpoint.forEachDocument { records.append($0) }
            #expect(records.count == 3 && records.allSatisfy { $0.extractor == "text" })
            for index in records.indices {
                let metadata = rules.metadata(
                    key: records[index].key,
                    size: records[index].size,
                    mtimeNanoseconds: records[index].mtimeNanoseconds
                )
                records[index].extractor = nil
                records[index].metadataHash = rules.fingerprint(of: metadata, read: nil)
            }
            try checkpoint.commit(put: records)
        }
        #expect(try await harness.run().documentsSkipped == 3)

        harness.configuration.extract.pdf.joinHyphens = false
        harness.extractors = Self.extractors(harness.configuration)
        #expect(try await harness.run().documentsUpserted == 3)
        #expect(try harness.record("group0/doc0.txt")?.extractor == "text")
        harness.configuration.extract.pdf.joinHyphens = true
        harness.extractors = Self.extractors(harness.configuration)
        #expect(try await harness.run().documentsSkipped == 3)
    }

    @Test func changesAreListedByKey() {
        var old = PipelineConfiguration()
        old.chunk.maxTokens = 256
        var new = old
        new.chunk.maxTokens = 128
        new.extract.pdf.joinHyphens = false
        let changes = Self.shaping(new).changes(from: ShapingSettings(text: Self.shaping(old).text))
        #expect(changes == ["chunk.max_tokens 256 → 128", "extract.pdf.join_hyphens true → false"])
        #expect(Self.shaping(old) == ShapingSettings(text: Self.shaping(old).text))
    }

    @Test func aChangeNamesTheExtractorsThatReadIt() {
        let old = PipelineConfiguration()
        func affected(_ adjust: (inout PipelineConfiguration) -> Void) -> [String]? {
            var new = old
            adjust(&new)
            return Self.shaping(new).extractorsAffected(since: Self.shaping(old))?.sorted()
        }
        #expect(affected { $0.extract.ocr.dpi = 200 } == ["pdf"])
        #expect(affected { $0.extract.ocr.mode = .always } == ["pdf"])
        #expect(affected { $0.extract.ocr.languages = ["deu"] } == ["image", "pdf"])
        #expect(affected { $0.extract.json.fields = ["body"] } == ["json"])
        #expect(
            affected {
                $0.extract.pdf.stripHeadersFooters = true
                $0.extract.json.fields = ["a"]
            } == ["json", "pdf"]
        )
        #expect(affected { $0.chunk.overlapTokens = 0 } == nil)
        #expect(affected { _ in } == [])
        // Every setting in the fingerprint is read by some extractor, and a text file reads only chunking's.
        let text = Self.shaping(old).text(read: "text")
        #expect(!text.contains("extract.") && text.contains("chunk.max_tokens="))
        // The names it knows are the registry's, in its order: no other list of extractors.
        let shipped = ExtractorRegistry.standard(configuration: old.extract).extractors.map(\.name)
        #expect(Self.shaping(old).extractorNames == shipped)
    }

    /// `chunk.context` shapes what every document embeds: a change processes every document again. Off, it
    /// is not written, so a state made before the setting existed keeps its fingerprint.
    @Test func theChunkContextShapesEveryDocumentWhenSet() {
        var old = PipelineConfiguration()
        old.chunk.context = .none
        var new = old
        new.chunk.context = .headings
        #expect(Self.shaping(new).extractorsAffected(since: Self.shaping(old)) == nil)
        #expect(Self.shaping(new).changes(from: Self.shaping(old)) == ["chunk.context (unset) → headings"])
        #expect(Self.shaping(new).text(read: "text").contains("chunk.context=headings"))
        #expect(!Self.shaping(old).text.contains("chunk.context"))
    }

    /// The extractors Sluice ships, which declare the settings they read.
    static func standardExtractors(_ configuration: PipelineConfiguration) -> [any Extractor] {
        ExtractorRegistry.standard(configuration: configuration.extract).extractors
    }

    static func shaping(_ configuration: PipelineConfiguration) -> ShapingSettings {
        ShapingSettings(configuration, extractors: standardExtractors(configuration))
    }

    /// The settings an extractor declares are what the fingerprint holds: the values of the shipped
    /// extractors' settings are the ones states were written with (a changed text would process every
    /// document again after an upgrade).
    @Test func theDeclaredSettingsAreTheOnesStatesHold() {
        let text = Self.shaping(PipelineConfiguration()).text
        #expect(
            text == """
                chunk.max_tokens=256
                chunk.overlap_tokens=32
                chunk.strategy=recursive
                extract.json.fields=
                extract.ocr.dpi=300
                extract.ocr.languages=eng
                extract.ocr.min_text_chars=16
                extract.ocr.mode=auto
                extract.ocr.psm=3
                extract.pdf.join_hyphens=true
                extract.pdf.strip_headers=false
                """
        )
    }

    /// A format added from outside Sluice declares its own setting, and a change of it processes again
    /// its documents alone, with no list of extractors or settings edited anywhere.
    @Test func anExtractorAddedFromOutsideDeclaresTheSettingsItReads() {
        struct Outline: Extractor {
            var depth: Int
            var name: String { "outline" }
            func accepts(_ input: ExtractionInput) -> Bool { input.key.hasSuffix(".opml") }
            func extract(_ input: ExtractionInput) throws -> ExtractedText { ExtractedText(sections: []) }
            var shapingSettings: [String: String] { ["extract.outline.depth": String(depth)] }
        }
        let configuration = PipelineConfiguration()
        func shaping(depth: Int) -> ShapingSettings {
            ShapingSettings(configuration, extractors: [Outline(depth: depth)] + Self.standardExtractors(configuration))
        }
        #expect(shaping(depth: 3).extractorsAffected(since: shaping(depth: 2)) == ["outline"])
        #expect(shaping(depth: 3).text(read: "outline").contains("extract.outline.depth=3"))
        #expect(!shaping(depth: 3).text(read: "pdf").contains("extract.outline"))
        #expect(shaping(depth: 3).extractorNames.first == "outline")
    }
}
