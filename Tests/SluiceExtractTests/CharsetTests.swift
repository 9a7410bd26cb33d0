import Foundation
import SluiceCore
import Testing

@testable import SluiceExtract

/// The character set a transport declares (``ExtractionInput/declaredCharset``), read as browsers read it.
@Suite struct CharsetTests {
    /// "Écluse à café" in ISO-8859-1.
    static let latin1: [UInt8] = [0xC9, 0x63, 0x6C, 0x75, 0x73, 0x65, 0x20, 0xE0, 0x20, 0x63, 0x61, 0x66, 0xE9]
    /// "Шлюз" in windows-1251.
    static let cyrillic: [UInt8] = [0xD8, 0xEB, 0xFE, 0xE7]

    static func input(_ bytes: [UInt8], name: String, charset: String?) -> ExtractionInput {
        ExtractionInput(
            key: name,
            fileURL: URL(fileURLWithPath: "/tmp/\(name)"),
            bytes: bytes,
            declaredCharset: charset
        )
    }

    @Test func labelsAreReadAsBrowsersReadThem() {
        #expect(Charset.named("utf8") == "UTF-8")
        #expect(Charset.named(" \"UTF-8\" ") == "UTF-8")
        #expect(Charset.named("ISO-8859-1") == "windows-1252")
        #expect(Charset.named("us-ascii") == "windows-1252")
        #expect(Charset.named("windows-1251") == "WINDOWS-1251")
        #expect(Charset.named("x-no-such-set") == nil)
        #expect(Charset.named("") == nil)
        #expect(Charset.named("utf-8//TRANSLIT") == nil, "iconv's suffixes are not labels")
    }

    @Test func plainTextAndCSVAreDecodedFromTheDeclaredSet() throws {
        let text = try TextExtractor().extract(Self.input(Self.latin1 + [0x0A], name: "a.txt", charset: "iso-8859-1"))
        #expect(text.sections.map(\.text).joined() == "Écluse à café\n")
        #expect(text.metadata["charset"] == "windows-1252")
        // Undeclared, the same bytes are not UTF-8: the reason names the offset, as before.
        let error = #expect(throws: SluiceError.self) {
            try TextExtractor().extract(Self.input(Self.latin1, name: "a.txt", charset: nil))
        }
        #expect(error?.code == .invalidEncoding)
        let csv = try CSVExtractor().extract(
            Self.input(Array("name\n".utf8) + Self.cyrillic + [0x0A], name: "t.csv", charset: "windows-1251")
        )
        #expect(csv.sections.map(\.text).joined() == "name: Шлюз")
        #expect(csv.metadata["charset"] == "WINDOWS-1251")
    }

    @Test func aByteOrderMarkOutranksTheTransportAndTheTransportOutranksAMeta() throws {
        let bom = try TextExtractor().extract(
            Self.input([0xEF, 0xBB, 0xBF] + Array("Écluse\n".utf8), name: "b.txt", charset: "windows-1251")
        )
        #expect(bom.sections.map(\.text).joined() == "Écluse\n")
        #expect(bom.metadata["charset"] == nil)
        let page =
            Array("<html><head><meta charset=\"iso-8859-1\"></head><body><p>".utf8) + Self.cyrillic
            + Array("</p></body></html>".utf8)
        let declared = try HTMLExtractor().extract(Self.input(page, name: "p.html", charset: "windows-1251"))
        #expect(declared.sections.map(\.text).joined().contains("Шлюз"))
        #expect(declared.metadata["charset"] == "WINDOWS-1251")
        let undeclared = try HTMLExtractor().extract(Self.input(page, name: "p.html", charset: nil))
        #expect(undeclared.metadata["charset"] == "windows-1252")
        #expect(HTMLSniffer.encoding(of: [0xFF, 0xFE, 0x3C, 0x00], declared: "windows-1251") == "UTF-16LE")
        #expect(HTMLSniffer.encoding(of: Array("<p>x</p>".utf8), declared: "no-such-set") == "UTF-8")
    }

    @Test func bytesTheSetDoesNotDefineBecomeReplacementCharacters() throws {
        // 0x98 is undefined in windows-1251.
        let decoded = try #require(Charset.decode([0x41, 0x98, 0x42], from: "WINDOWS-1251"))
        #expect(String(decoding: decoded, as: UTF8.self) == "A\u{FFFD}B")
        // A long input goes through the buffer in pieces: nothing is lost at the seams.
        let long = [UInt8](repeating: 0xE9, count: 3 << 20)
        let wide = try #require(Charset.decode(long, from: "windows-1252"))
        #expect(wide.count == 2 * long.count)
    }
}
