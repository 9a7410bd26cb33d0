import Foundation
import SluiceCore
import SluiceTesting
import Testing

@testable import SluiceExtract

/// Every reader against documents that multiply their text by reference or repetition
/// (``HostileDocuments``, issue 37): past `extract.max_text_mb` the extraction fails with `text-too-large`,
/// and it stops there, not after building the whole text; under it the same document is read in full.
@Suite struct HostileDocumentTests {
    /// Each would make 4 MB of text or more from a file of at most some 70 KB.
    static let documents: [HostileDocuments.Document] = [
        HostileDocuments.xlsxSharedString(stringBytes: 64 << 10, cells: 64),
        HostileDocuments.xlsxRepeatedHeader(headerBytes: 64 << 10, rows: 64),
        HostileDocuments.pptxRepeatedSlide(slideBytes: 64 << 10, times: 64),
        HostileDocuments.docxRepeatedRuns(paragraphBytes: 4_096, paragraphs: 1_024),
        HostileDocuments.epubRepeatedChapter(chapterBytes: 64 << 10, times: 64),
        HostileDocuments.csvRepeatedHeader(headerBytes: 64 << 10, rows: 64),
        HostileDocuments.jsonRepeatedKey(keyBytes: 64 << 10, values: 64),
    ]

    static func input(_ document: HostileDocuments.Document, limit: Int) -> ExtractionInput {
        ExtractionInput(
            key: document.name,
            fileURL: URL(fileURLWithPath: "/tmp/\(document.name)"),
            bytes: document.bytes,
            maxTextBytes: limit
        )
    }

    @Test("past the bound: text-too-large, stopped within one row, part or paragraph of it", arguments: documents)
    func failsAtTheBound(_ document: HostileDocuments.Document) throws {
        #expect(document.bytes.count < 80_000 && document.producedBytes >= 4 << 20, "\(document.bytes.count) bytes")
        let limit = 1 << 20
        let error = try DocumentSamples.failure(Self.input(document, limit: limit))
        #expect(error.code == .textTooLarge, "\(error)")
        #expect(error.message.contains("its bound of 1.0 MB (extract.max_text_mb"), "\(error.message)")
        // What was made before stopping: at most the bound plus one unit of production (64 KB here).
        let spent = try #require(Self.megabytesProduced(error.message), "\(error.message)")
        #expect(spent <= 1.1, "\(document): produced \(spent) MB before stopping, not ~1 MB")
    }

    @Test("under the bound: the same document is read whole", arguments: documents)
    func readWholeUnderTheBound(_ document: HostileDocuments.Document) throws {
        let (_, text) = try DocumentSamples.extract(Self.input(document, limit: 2 * document.producedBytes))
        // Its text with each section's heading path and metadata, as the bound counts it.
        var produced = TextBudget(limit: .max)
        for section in text.sections { try produced.charge(section) }
        #expect(produced.spent >= document.producedBytes * 9 / 10, "\(produced.spent) of \(document.producedBytes)")
    }

    @Test func plainTextAndHTMLAreBoundedToo() throws {
        let text = String(repeating: "a line of plain text\n", count: 100_000)
        for name in ["big.txt", "big.md", "big.html"] {
            let input = ExtractionInput(
                key: name,
                fileURL: URL(fileURLWithPath: "/tmp/\(name)"),
                bytes: Array((name.hasSuffix(".html") ? "<p>" + text + "</p>" : text).utf8),
                maxTextBytes: 1 << 20
            )
            #expect(try DocumentSamples.failure(input).code == .textTooLarge, "\(name)")
        }
    }

    @Test func aMillionRowSheetIsReadRowByRow() throws {
        let document = HostileDocuments.xlsxManyRows(1_000_000)
        let (_, text) = try DocumentSamples.extract(Self.input(document, limit: 64 << 20))
        #expect(text.sections.count == 10_000)
        #expect(text.sections.last?.metadata["lines"] == "999902-1000000")
        #expect(text.sections.last?.text.hasSuffix("n: 999999; m: 0") == true)
    }

    /// "… extraction stopped after 1.0 MB …" → 1.0; "… after 512 KB …" → 0.5
    static func megabytesProduced(_ message: String) -> Double? {
        guard let range = message.range(of: "stopped after ") else { return nil }
        let rest = message[range.upperBound...]
        guard let number = Double(rest.prefix { $0.isNumber || $0 == "." }) else { return nil }
        return rest.contains(" KB")
            && rest.firstRange(of: " KB")!.lowerBound < (rest.firstIndex(of: ";") ?? rest.endIndex)
            ? number / 1024 : number
    }
}
