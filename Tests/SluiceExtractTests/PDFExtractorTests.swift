import Foundation
import SluiceCore
import SluiceExtract
import Testing

/// The in-process PDF extractor on the committed samples (the CLI tests cover the worker processes).
@Suite struct PDFExtractorTests {
    static func extractor(
        ocr mode: PipelineConfiguration.Extract.OCR.Mode = .auto,
        configure: (inout PipelineConfiguration.Extract.PDF) -> Void = { _ in }
    ) -> PDFExtractor {
        var ocr = PipelineConfiguration.Extract.OCR()
        ocr.mode = mode
        var pdf = PipelineConfiguration.Extract.PDF()
        configure(&pdf)
        return PDFExtractor(pdf: pdf, engines: OCREnginePool(options: ocr))
    }

    static func extract(_ path: String, with extractor: PDFExtractor = extractor()) throws -> ExtractedText {
        let url = Samples.url(path)
        return try extractor.extract(
            ExtractionInput(key: path, fileURL: url, bytes: [UInt8](try Data(contentsOf: url)))
        )
    }

    @Test func pagesBecomeSectionsWithPageNumbersTitleAndAuthor() throws {
        let text = try Self.extract("pdf/xz-utils-faq.pdf")
        #expect(text.sections.map(\.page) == [1, 2, 3, 4])
        #expect(text.metadata["title"] == "XZ Utils FAQ")
        #expect(text.metadata["author"] == "Lasse Collin")
        #expect(text.metadata["pages"] == "4")
        #expect(text.metadata["format"] == "pdf")
        #expect(text.metadata["ocr_pages"] == nil, "a PDF with a text layer is not OCR'd in auto mode")
        #expect(text.sections[0].text.contains("What do the letters XZ mean?"))
    }

    @Test func pagesAreHeldToTheTextBoundAsTheyAreRead() throws {
        let url = Samples.url("pdf/fontconfig-user.pdf")
        var input = ExtractionInput(key: "manual.pdf", fileURL: url, bytes: [UInt8](try Data(contentsOf: url)))
        let whole = try Self.extractor().extract(input).utf8Count
        #expect(whole > 24 << 10)
        input.maxTextBytes = 4 << 10
        let error = #expect(throws: SluiceError.self) { try Self.extractor().extract(input) }
        #expect(error?.code == .textTooLarge)
        #expect(
            error?.message.contains("its bound of 4 KB (extract.max_text_mb") == true,
            "\(String(describing: error))"
        )
    }

    @Test func twoColumnPagesReadColumnByColumn() throws {
        let text = try Self.extract("pdf/zlib-two-column.pdf")
        #expect(text.metadata["title"] == "zlib: the compression algorithm")
        #expect(text.metadata["author"] == "Jean-loup Gailly and Mark Adler")
        let page1 = Self.folded(text.sections[0].text)
        // Sentences that wrap over several lines of the left column come out whole, then the right column.
        let left =
            "The deflation algorithm used by gzip (also zip and zlib) is a variation of LZ77 (Lempel-Ziv 1977, see reference below)."
        let leftLater =
            "Duplicated strings are found using a hash table. All input strings of length 3 are inserted in the hash table."
        let right = "deflate() also defers the selection of matches with a lazy evaluation mechanism."
        let positions = [left, leftLater, right].map { page1.range(of: $0)?.lowerBound }
        #expect(positions.allSatisfy { $0 != nil }, "page 1:\n\(page1)")
        if let a = positions[0], let b = positions[1], let c = positions[2] {
            #expect(a < b && b < c)
        }
    }

    @Test func repeatedHeadersAndPageNumbersAreStrippedWhenConfigured() throws {
        let kept = try Self.extract("pdf/fontconfig-user.pdf")
        let stripped = try Self.extract(
            "pdf/fontconfig-user.pdf",
            with: Self.extractor { $0.stripHeadersFooters = true }
        )
        let firstLines = { (text: ExtractedText) in
            text.sections.dropFirst().map { $0.text.split(separator: "\n").first.map(String.init) ?? "" }
        }
        #expect(firstLines(kept).filter { $0 == "fonts-conf" }.count >= 10)
        #expect(!firstLines(stripped).contains("fonts-conf"))
        let numbered = { (text: ExtractedText) in
            text.sections.filter {
                ($0.text.split(separator: "\n").last.map { $0.trimmingCharacters(in: .whitespaces) })
                    == $0.page.map(String.init)
            }.count
        }
        #expect(numbered(kept) >= 10)
        #expect(numbered(stripped) == 0, "page numbers at page ends stay")
        let body = { (text: ExtractedText) in PDFExtractorTests.folded(text.sections.map(\.text).joined(separator: " "))
        }
        #expect(body(stripped).contains("Fontconfig is a library designed to provide system-wide font configuration"))
        #expect(body(stripped).count > body(kept).count * 9 / 10, "only headers and footers go")
    }

    @Test func scannedPDFIsOCRdInAutoModeWithHighCharacterAccuracy() throws {
        let text = try Self.extract("pdf/xz-faq-scanned.pdf")
        let expected = try Samples.text("images/xz-faq-page.expected.txt")
        let accuracy = CharacterAccuracy.of(
            recognized: text.sections.map(\.text).joined(separator: "\n"),
            expected: expected
        )
        #expect(accuracy > 0.9, "accuracy \(accuracy)")
        #expect(text.metadata["ocr_pages"] == "1")
        #expect(Int(text.metadata["ocr_confidence"] ?? "") ?? 0 > 70)
        #expect(text.sections.map(\.page) == [1])
    }

    @Test func scannedPDFWithOCROffFailsSayingSo() {
        let error = #expect(throws: SluiceError.self) {
            try Self.extract("pdf/xz-faq-scanned.pdf", with: Self.extractor(ocr: .never))
        }
        #expect(error?.code == .emptyDocument)
        #expect(error?.message.contains("never") == true, "\(error?.message ?? "")")
    }

    @Test func mixedPDFOCRsOnlyThePageWithoutText() throws {
        let text = try Self.extract("pdf/mixed-text-and-scan.pdf")
        #expect(text.sections.map(\.page) == [1, 2])
        #expect(text.metadata["ocr_pages"] == "1")
        #expect(text.sections[1].text.contains("Lempel-Ziv-Markov"))
        let always = try Self.extract("pdf/mixed-text-and-scan.pdf", with: Self.extractor(ocr: .always))
        #expect(always.metadata["ocr_pages"] == "2")
    }

    @Test func encryptedPDFNeedsThePasswordFromTheConfiguredVariable() throws {
        let none = #expect(throws: SluiceError.self) { try Self.extract("bad/encrypted.pdf") }
        #expect(none?.code == .encrypted)
        #expect(none?.message.contains("encrypted") == true)
        #expect(none?.message.contains("extract.pdf.password_env") == true)

        let variable = "SLUICE_TEST_PDF_PASSWORD_\(getpid())"
        let unset = #expect(throws: SluiceError.self) {
            try Self.extract("bad/encrypted.pdf", with: Self.extractor { $0.passwordEnvironmentVariable = variable })
        }
        #expect(unset?.message.contains("\(variable)") == true && unset?.message.contains("not set") == true)

        setenv(variable, "wrong", 1)
        let wrong = #expect(throws: SluiceError.self) {
            try Self.extract("bad/encrypted.pdf", with: Self.extractor { $0.passwordEnvironmentVariable = variable })
        }
        #expect(wrong?.code == .encrypted)
        #expect(wrong?.message.contains("wrong") == false, "the password itself must never appear")

        setenv(variable, "sluice", 1)
        defer { unsetenv(variable) }
        let opened = try Self.extract(
            "bad/encrypted.pdf",
            with: Self.extractor { $0.passwordEnvironmentVariable = variable }
        )
        #expect(opened.metadata["title"] == "XZ Utils FAQ")
        #expect(opened.sections.count == 4)
    }

    @Test func truncatedPDFFailsAsDamaged() {
        let error = #expect(throws: SluiceError.self) { try Self.extract("bad/truncated.pdf") }
        #expect(error?.code == .extractionFailed)
        #expect(error?.message.contains("not a readable PDF") == true, "\(error?.message ?? "")")
    }

    static func folded(_ text: String) -> String {
        text.split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
    }
}

@Suite struct ImageExtractorTests {
    @Test(arguments: [
        "images/xz-faq-page.png", "images/xz-faq-page.jpg", "images/xz-faq-page.tiff", "bad/png-named.pdf",
    ])
    func imagesAreOCRdWithConfidence(path: String) throws {
        let url = Samples.url(path)
        let input = ExtractionInput(key: path, fileURL: url, bytes: [UInt8](try Data(contentsOf: url)))
        let extractor = ImageExtractor(engines: OCREnginePool(options: .init()))
        #expect(extractor.accepts(input))
        let text = try extractor.extract(input)
        let accuracy = CharacterAccuracy.of(
            recognized: text.sections[0].text,
            expected: try Samples.text("images/xz-faq-page.expected.txt")
        )
        #expect(accuracy > 0.9, "\(path): accuracy \(accuracy)")
        #expect(Int(text.metadata["ocr_confidence"] ?? "") ?? 0 > 70)
    }

    @Test(arguments: ["images/xz-faq-heading.bmp", "images/xz-faq-heading.gif", "images/xz-faq-heading.webp"])
    func otherImageFormatsAreRead(path: String) throws {
        let url = Samples.url(path)
        let input = ExtractionInput(key: path, fileURL: url, bytes: [UInt8](try Data(contentsOf: url)))
        let extractor = ImageExtractor(engines: OCREnginePool(options: .init()))
        #expect(extractor.accepts(input))
        let text = try extractor.extract(input)
        #expect(text.sections[0].text.contains("What do the letters XZ mean?"), "\(path): \(text.sections[0].text)")
        #expect(text.metadata["format"] == URL(fileURLWithPath: path).pathExtension)
    }

    @Test func pageSegmentationModeIsApplied() throws {
        var options = PipelineConfiguration.Extract.OCR()
        options.pageSegmentationMode = 7  // one text line: a page of 23 lines reads as garbage
        let url = Samples.url("images/xz-faq-page.png")
        let single = try ImageExtractor(engines: OCREnginePool(options: options)).extract(
            ExtractionInput(key: "p", fileURL: url, bytes: [UInt8](try Data(contentsOf: url)))
        )
        let accuracy = CharacterAccuracy.of(
            recognized: single.sections[0].text,
            expected: try Samples.text("images/xz-faq-page.expected.txt")
        )
        #expect(accuracy < 0.5, "psm 7 should not read a whole page: \(accuracy)")
    }

    @Test func truncatedImageFailsAsUnreadable() throws {
        let bytes = [UInt8](try Data(contentsOf: Samples.url("images/xz-faq-page.png")).prefix(600))
        let input = ExtractionInput(key: "cut.png", fileURL: URL(fileURLWithPath: "/cut.png"), bytes: bytes)
        let error = #expect(throws: SluiceError.self) {
            try ImageExtractor(engines: OCREnginePool(options: .init())).extract(input)
        }
        #expect(error?.code == .unreadable)
        #expect(error?.message.contains("PNG image") == true, "\(error?.message ?? "")")
    }
}
