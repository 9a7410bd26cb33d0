import Foundation
import SluiceCore
import Testing

@testable import SluiceExtract

/// E-books: Tests/SluiceExtractTests/Fixtures/xz-guide.epub, made by scripts/make-samples.sh with pandoc.
@Suite struct EPUBExtractorTests {
    static let fixture = DocumentSamples.root.deletingLastPathComponent()
        .appendingPathComponent("Tests/SluiceExtractTests/Fixtures/xz-guide.epub")

    static func input(_ bytes: [UInt8], name: String = "book.epub") -> ExtractionInput {
        ExtractionInput(key: name, fileURL: URL(fileURLWithPath: "/tmp/\(name)"), bytes: bytes)
    }

    @Test func chaptersInSpineOrderWithHeadingsListsAndTables() throws {
        let bytes = Array(try Data(contentsOf: Self.fixture))
        let (extractor, text) = try DocumentSamples.extract(Self.input(bytes, name: "guide.bin"))
        #expect(extractor == "epub")
        #expect(text.metadata["format"] == "epub")
        #expect(text.metadata["title"] == "XZ Utils, a short guide")
        #expect(text.metadata["author"] == "Lasse Collin")
        #expect(text.metadata["language"] == "en")
        #expect(text.metadata["chapters"] == "3")
        var chapters: [String] = []
        for chapter in text.sections.compactMap({ $0.metadata["chapter"] }) where chapters.last != chapter {
            chapters.append(chapter)
        }
        #expect(
            chapters == [
                "EPUB/text/title_page.xhtml", "EPUB/text/ch001.xhtml", "EPUB/text/ch002.xhtml",
            ]
        )
        let history = try #require(text.sections.first { $0.headingPath == ["Introduction", "History"] })
        #expect(
            history.text
                == "## History\n\nXZ Utils were written for POSIX-like systems, but also work on some not-so-POSIX systems."
        )
        let using = try #require(text.sections.first { $0.headingPath == ["Using xz"] })
        // (pandoc typeset "--list" with an en dash.)
        #expect(using.text.contains("1. Compress the file with xz.\n2. Check the result with xz \u{2013}list."))
        #expect(using.text.contains("Suffix | Format\n.xz | XZ\n.lzma | LZMA_Alone"))
        // The introduction comes before the chapter after it.
        let order = text.sections.map(\.headingPath.first)
        #expect(order.firstIndex(of: "Introduction")! < order.firstIndex(of: "Using xz")!)
    }

    @Test func drmProtectedBooksFailAsEncryptedAndObfuscatedFontsDoNot() throws {
        let bytes = Array(try Data(contentsOf: Self.fixture))
        let locked = try Self.adding(
            bytes,
            encryption: """
                <encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container" xmlns:enc="http://www.w3.org/2001/04/xmlenc#">\
                <enc:EncryptedData><enc:EncryptionMethod Algorithm="http://www.w3.org/2001/04/xmlenc#aes128-cbc"/>\
                <enc:CipherData><enc:CipherReference URI="EPUB/text/ch002.xhtml"/></enc:CipherData></enc:EncryptedData></encryption>
                """
        )
        let error = try DocumentSamples.failure(Self.input(locked))
        #expect(error.code == .encrypted && error.message.contains("EPUB/text/ch002.xhtml"))
        let fonts = try Self.adding(
            bytes,
            encryption: """
                <encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container" xmlns:enc="http://www.w3.org/2001/04/xmlenc#">\
                <enc:EncryptedData><enc:EncryptionMethod Algorithm="http://www.idpf.org/2008/embedding"/>\
                <enc:CipherData><enc:CipherReference URI="EPUB/fonts/serif.otf"/></enc:CipherData></enc:EncryptedData></encryption>
                """
        )
        #expect(try DocumentSamples.extract(Self.input(fonts)).extractor == "epub")
        var tight = PipelineConfiguration.Extract()
        tight.zip.maxInflatedMB = 0.002
        #expect(try DocumentSamples.failure(Self.input(bytes), configuration: tight).code == .zipBomb)
    }

    /// The book with a `META-INF/encryption.xml` added.
    static func adding(_ bytes: [UInt8], encryption: String) throws -> [UInt8] {
        try ZIPFixture.archive(try ZIPFixture.parts(of: bytes) + [("META-INF/encryption.xml", Data(encryption.utf8))])
    }
}
