import Foundation
import SluiceCore
import SluiceExtract
import SluiceLMDB
import SluiceTesting
import Synchronization
import Testing

@testable import SluicePipeline
@testable import SluiceState

/// The extraction cache kept in the state across runs (docs/DESIGN.md §2: the same bytes under two keys are
/// extracted once), with a counting stand-in for an expensive extractor (PDF, OCR).
@Suite struct ExtractionCacheTests {
    private func write(_ text: String, _ key: String, in harness: PipelineHarness) throws {
        try text.write(to: harness.source.appendingPathComponent(key), atomically: true, encoding: .utf8)
    }

    private func checkpoint(_ harness: PipelineHarness) throws -> CheckpointStore {
        try CheckpointStore(directory: URL(fileURLWithPath: harness.configuration.state), readOnly: true)
    }

    /// A harness whose extractor is a counting stand-in for OCR, after a first run over `files`.
    private func indexed(
        _ files: [String: String],
        language: String = "eng",
        _ adjust: (inout PipelineConfiguration) -> Void = { _ in }
    ) async throws -> (PipelineHarness, CountingScanExtractor) {
        var harness = try PipelineHarness(adjust)
        let extractor = CountingScanExtractor(language: language)
        harness.extractors = .init(extractors: [extractor])
        for (key, text) in files { try write(text, key, in: harness) }
        let stats = try await harness.run()
        #expect(stats.documentsUpserted == files.count)
        #expect(extractor.calls == Set(files.values).count, "identical files share one extraction")
        return (harness, extractor)
    }

    private let scanned =
        "Page one of a scanned report.\n\nA second paragraph read by OCR, at some cost.\u{0C}Page two: the appendix."

    @Test func aCopyUnderANewKeyInALaterRunIsNotExtractedAndExportsAsWithoutTheCache() async throws {
        let (harness, extractor) = try await indexed(["report.scan": scanned])
        defer { harness.cleanUp() }
        #expect(try checkpoint(harness).extractionCacheUsage().entries == 1)

        try write(scanned, "copy of report.scan", in: harness)
        let second = try await harness.run()
        #expect(second.documentsUpserted == 1)
        #expect(extractor.calls == 1, "the copy's text comes from the state")
        #expect(second.extractionsCached == 1)

        // The same corpus in one run without the cache stores exactly the same records.
        let (reference, _) = try await indexed(["report.scan": scanned, "copy of report.scan": scanned]) {
            $0.extract.cacheMB = 0
        }
        defer { reference.cleanUp() }
        #expect(harness.sink.records.count == 2 * second.chunks)
        #expect(harness.sink.records.ignoringFileTimes == reference.sink.records.ignoringFileTimes)
    }

    @Test func changingASettingThatChangesTheOutputExtractsAgain() async throws {
        let (first, english) = try await indexed(["report.scan": scanned])
        var harness = first
        defer { harness.cleanUp() }

        let german = CountingScanExtractor(language: "deu")
        harness.extractors = .init(extractors: [german])
        try write(scanned, "copy.scan", in: harness)
        let second = try await harness.run()
        #expect(german.calls == 1, "another OCR language is another extraction")
        #expect((second.extractionsCached ?? 0) == 0)
        // The entry of the identity no extractor has any more is collected; the new one is kept.
        let state = try checkpoint(harness)
        #expect(try state.extractionCacheUsage().entries == 1)
        let hash = ContentHash(utf8: scanned)
        #expect(try state.cachedExtraction(content: hash, identity: german.identity) != nil)
        #expect(try state.cachedExtraction(content: hash, identity: english.identity) == nil)
    }

    @Test func entriesOfChangedAndPrunedDocumentsAreCollected() async throws {
        let (harness, extractor) = try await indexed([
            "a.scan": scanned, "b.scan": "Another scan, another text.", "c.scan": "A third one that stays.",
        ])
        defer { harness.cleanUp() }
        #expect(try checkpoint(harness).extractionCacheUsage().entries == 3)

        try write("The first scan, rescanned with a new text.", "a.scan", in: harness)
        try FileManager.default.removeItem(at: harness.source.appendingPathComponent("b.scan"))
        var options = RunOptions()
        options.prune = true
        options.allowMassDelete = true
        let second = try await harness.run(options)
        #expect(second.documentsPruned == 1)
        let state = try checkpoint(harness)
        #expect(try state.extractionCacheUsage().entries == 2)
        #expect(try state.cachedExtraction(content: ContentHash(utf8: scanned), identity: extractor.identity) == nil)
        #expect(
            try state.cachedExtraction(
                content: ContentHash(utf8: "Another scan, another text."),
                identity: extractor.identity
            ) == nil
        )
        #expect(
            try state.cachedExtraction(
                content: ContentHash(utf8: "The first scan, rescanned with a new text."),
                identity: extractor.identity
            ) != nil
        )
        #expect(
            try state.cachedExtraction(
                content: ContentHash(utf8: "A third one that stays."),
                identity: extractor.identity
            ) != nil
        )
    }

    @Test func capZeroTurnsTheCacheOffAndEmptiesIt() async throws {
        let (first, extractor) = try await indexed(["a.scan": scanned])
        var harness = first
        defer { harness.cleanUp() }
        #expect(try checkpoint(harness).extractionCacheUsage().entries == 1)

        harness.configuration.extract.cacheMB = 0
        try write(scanned, "b.scan", in: harness)
        let second = try await harness.run()
        #expect(extractor.calls == 2)
        #expect((second.extractionsCached ?? 0) == 0)
        #expect(try checkpoint(harness).extractionCacheUsage().entries == 0)
    }

    @Test func aFullCacheTakesNoMoreEntries() async throws {
        // ~50 bytes: less than the entry
        let (harness, _) = try await indexed(["a.scan": scanned]) { $0.extract.cacheMB = 0.00005 }
        defer { harness.cleanUp() }
        #expect(try checkpoint(harness).extractionCacheUsage().entries == 0)
    }

    @Test func anUndecodableEntryIsAMissAndIsReplaced() async throws {
        let (harness, extractor) = try await indexed(["a.scan": scanned])
        defer { harness.cleanUp() }
        do {
            let state = try CheckpointStore(directory: URL(fileURLWithPath: harness.configuration.state))
            let key = CheckpointStore.extractionKey(content: ContentHash(utf8: scanned), identity: extractor.identity)
            try state.environment.write { txn in
                let stored = try #require(try txn.get(state.extractions!, key))
                var damaged = stored
                damaged[damaged.count / 2] ^= 0x55
                try txn.put(state.extractions!, key, damaged)
            }
        }
        try write(scanned, "b.scan", in: harness)
        let second = try await harness.run()
        #expect(second.documentsUpserted == 1)
        #expect(extractor.calls == 2, "a damaged entry is extracted again")
        try write(scanned, "c.scan", in: harness)
        let third = try await harness.run()
        #expect(extractor.calls == 2, "and the new extraction replaced it")
        #expect(third.extractionsCached == 1)
        let texts = Dictionary(grouping: harness.sink.records, by: \.documentKey).mapValues {
            $0.sorted { $0.ordinal < $1.ordinal }.map(\.text)
        }
        #expect(texts["a.scan"] == texts["b.scan"] && texts["b.scan"] == texts["c.scan"])
    }
}

/// Stands in for an expensive extractor (OCR): counts its calls, splits pages at form feeds, and has a
/// cache identity that depends on its "language".
final class CountingScanExtractor: Extractor {
    let language: String
    private let count = Atomic<Int>(0)
    init(language: String) { self.language = language }
    var calls: Int { count.load(ordering: .relaxed) }
    var name: String { "scan" }
    var identity: ExtractorIdentity { ExtractorIdentity(name: name, version: 1, settings: ["language": language]) }
    var cacheIdentity: ExtractorIdentity? { identity }
    func accepts(_ input: ExtractionInput) -> Bool { input.key.hasSuffix(".scan") }
    func extract(_ input: ExtractionInput) throws -> ExtractedText {
        count.add(1, ordering: .relaxed)
        let pages = String(decoding: input.bytes, as: UTF8.self).split(separator: "\u{0C}").map(String.init)
        let sections = pages.enumerated().map { index, text in
            TextSection(
                text: text,
                page: index + 1,
                headingPath: ["Report", "Page \(index + 1)"],
                metadata: ["ocr_page": String(index)]
            )
        }
        return ExtractedText(
            sections: sections,
            metadata: ["format": "scan", "ocr_confidence": "91", "language": language]
        )
    }
}
