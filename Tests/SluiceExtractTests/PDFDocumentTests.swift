import Foundation
import SluiceCore
import SluiceExtract
import SluiceTesting
import Testing

/// The package's `samples/` folder, found from this file's path (Tests/SluiceExtractTests/…).
private let samples = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent()
    .deletingLastPathComponent()
    .deletingLastPathComponent()
    .appendingPathComponent("samples")

private func sample(_ relative: String) -> String {
    samples.appendingPathComponent(relative).path
}

@Suite struct PDFDocumentTests {
    struct Expectation: Sendable, CustomTestStringConvertible {
        var file: String
        var pages: Int
        var title: String?
        var author: String?
        var firstPageWords: [String]
        var testDescription: String { file }
    }

    static let committedPDFs = [
        Expectation(
            file: "pdf/xz-utils-faq.pdf",
            pages: 4,
            title: "XZ Utils FAQ",
            author: "Lasse Collin",
            firstPageWords: ["What do the letters XZ mean?", "Lempel-Ziv-Markov", "LZMA2"]
        ),
        Expectation(
            file: "pdf/fontconfig-user.pdf",
            pages: 15,
            title: nil,
            author: nil,
            firstPageWords: ["fonts.conf", "Font configuration files", "Fontconfig is a library"]
        ),
        Expectation(
            file: "pdf/shared-mime-info-spec.pdf",
            pages: 17,
            title: nil,
            author: nil,
            firstPageWords: ["Shared MIME-info Database", "Thomas Leonard", "MIME type"]
        ),
    ]

    @Test(arguments: committedPDFs)
    func opensCommittedSample(_ expected: Expectation) throws {
        let document = try PDFDocument(path: sample(expected.file))
        #expect(document.pageCount == expected.pages)
        #expect(document.title == expected.title)
        #expect(document.author == expected.author)
        let text = try document.text(ofPage: 0)
        for word in expected.firstPageWords {
            #expect(text.contains(word), "page 1 of \(expected.file) lacks \(word)")
        }
    }

    /// The text layer is `pdftotext`'s, page for page (the benchmark's reference extracts the same text; it
    /// inflates streams with poppler's own decoder, Sluice with zlib: PopplerFlateStream.h).
    @Test(arguments: [
        "pdf/zlib-two-column.pdf", "pdf/fontconfig-user.pdf", "pdf/mixed-text-and-scan.pdf",
        "pdf/shared-mime-info-spec.pdf", "pdf/xz-utils-faq.pdf", "pdf/xz-faq-scanned.pdf",
    ])
    func pageTextIsWhatPdftotextPrints(_ file: String) throws {
        let document = try PDFDocument(path: sample(file))
        for index in 0..<document.pageCount {
            let result = try ChildOutput.run(
                "/usr/bin/pdftotext",
                ["-f", "\(index + 1)", "-l", "\(index + 1)", sample(file), "-"]
            )
            let printed = result.output
            #expect(result.exit == ProcessExit(status: 0, signaled: false))
            // pdftotext ends every page with a form feed; the text layer gives pages one by one.
            let expected = String(decoding: printed, as: UTF8.self).replacingOccurrences(of: "\u{0C}", with: "")
            #expect(try document.text(ofPage: index) == expected, "page \(index + 1) of \(file)")
        }
    }

    @Test func everyPageHasText() throws {
        let document = try PDFDocument(path: sample("pdf/xz-utils-faq.pdf"))
        for index in 0..<document.pageCount {
            #expect(try !document.text(ofPage: index).isEmpty)
        }
        #expect(try document.text(ofPage: 3).contains("XZ Embedded"))
    }

    @Test func pageOutOfRangeThrows() throws {
        let document = try PDFDocument(path: sample("pdf/xz-utils-faq.pdf"))
        #expect(throws: SluiceError.self) { try document.text(ofPage: 4) }
        #expect(throws: SluiceError.self) { try document.text(ofPage: -1) }
    }

    @Test func truncatedPDFThrows() {
        let error = #expect(throws: SluiceError.self) {
            try PDFDocument(path: sample("bad/truncated.pdf"))
        }
        #expect(error?.code == .extractionFailed)
    }

    @Test func nonPDFThrows() {
        let error = #expect(throws: SluiceError.self) {
            try PDFDocument(path: sample("bad/binary.txt"))
        }
        #expect(error?.code == .extractionFailed)
    }

    @Test func missingFileThrows() {
        let error = #expect(throws: SluiceError.self) {
            try PDFDocument(path: sample("pdf/does-not-exist.pdf"))
        }
        #expect(error?.code == .extractionFailed)
        #expect(error?.message.contains("does-not-exist.pdf") == true)
    }

    @Test func encryptedPDFThrowsSayingEncrypted() {
        let error = #expect(throws: SluiceError.self) {
            try PDFDocument(path: sample("bad/encrypted.pdf"))
        }
        #expect(error?.code == .encrypted)
        #expect(error?.message.contains("encrypted") == true, "message: \(error?.message ?? "")")
    }

    @Test func encryptedPDFOpensWithItsPassword() throws {
        let document = try PDFDocument(path: sample("bad/encrypted.pdf"), password: "sluice")
        #expect(document.pageCount == 4)
        #expect(try document.text(ofPage: 0).contains("What do the letters XZ mean?"))
    }

    /// `swift test` runs in the package root; elsewhere there is no relative path to try, and the test says
    /// it was skipped.
    @Test(.enabled(if: sample("pdf/xz-utils-faq.pdf").hasPrefix(FileManager.default.currentDirectoryPath + "/")))
    func relativePathIsResolvedAgainstTheCurrentDirectory() throws {
        let directory = FileManager.default.currentDirectoryPath + "/"
        let absolute = sample("pdf/xz-utils-faq.pdf")
        let document = try PDFDocument(path: String(absolute.dropFirst(directory.count)))
        #expect(document.pageCount == 4)
        #expect(document.path == absolute)
    }
}
