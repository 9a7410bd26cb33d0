import Foundation
import SluiceCore
import Testing

@testable import SluiceExtract

@Suite struct OpenDocumentsTests {
    let a = Samples.url("pdf/xz-utils-faq.pdf").path
    let b = Samples.url("pdf/zlib-two-column.pdf").path
    let c = Samples.url("pdf/fontconfig-user.pdf").path

    @Test func keepsUpToCapacityAndClosesTheLeastRecentlyUsed() throws {
        var open = ExtractWorker.OpenDocuments(capacity: 2)
        var opened: [String] = []
        let opener: (String) throws -> PDFDocument = {
            opened.append($0)
            return try PDFDocument(path: $0)
        }
        let first = try open.document(at: a, open: opener)
        _ = try open.document(at: b, open: opener)
        #expect(try open.document(at: a, open: opener) === first)  // kept open, not re-opened
        _ = try open.document(at: c, open: opener)  // closes b, the least recently used
        #expect(open.paths == [a, c])
        _ = try open.document(at: b, open: opener)
        #expect(opened == [a, b, c, b])
        #expect(open.paths == [c, b])
    }

    @Test func aFailedOpenKeepsTheOthers() throws {
        var open = ExtractWorker.OpenDocuments(capacity: 3)
        _ = try open.document(at: a) { try PDFDocument(path: $0) }
        #expect(throws: (any Error).self) { try open.document(at: "/nonexistent.pdf") { try PDFDocument(path: $0) } }
        #expect(open.paths == [a])
    }
}

@Suite struct FirstPagesTests {
    let extractor = PDFExtractor(pdf: .init(), engines: OCREnginePool(options: .init()))

    @Test func stopsAfterTheFirstPageOnceTheBudgetIsSpent() throws {
        let document = try PDFDocument(path: Samples.url("pdf/fontconfig-user.pdf").path)
        let late = try ExtractWorker.firstPages(of: document, count: 10, until: .now - .seconds(1), with: extractor)
        #expect(late.map(\.number) == [1])
        let early = try ExtractWorker.firstPages(of: document, count: 10, until: .now + .seconds(600), with: extractor)
        #expect(early.map(\.number) == Array(1...10))
        let unbounded = try ExtractWorker.firstPages(of: document, count: 10, until: nil, with: extractor)
        #expect(unbounded.map(\.text) == early.map(\.text))
    }
}
