import Foundation
import SluiceCore
import SluiceExtract
import Testing

@Suite struct FormatSnifferTests {
    static let cases: [(name: String, bytes: [UInt8], format: DocumentFormat)] = [
        ("pdf", Array("%PDF-1.7\n%âãÏÓ\n".utf8), .pdf),
        ("png", [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13], .png),
        ("jpeg", [0xFF, 0xD8, 0xFF, 0xE0, 0, 16, 0x4A, 0x46], .jpeg),
        ("tiff little-endian", [0x49, 0x49, 0x2A, 0x00, 8, 0, 0, 0], .tiff),
        ("tiff big-endian", [0x4D, 0x4D, 0x00, 0x2A, 0, 0, 0, 8], .tiff),
        ("gif", Array("GIF89a".utf8) + [1, 0, 1, 0], .gif),
        ("webp", Array("RIFF".utf8) + [0x24, 0, 0, 0] + Array("WEBPVP8 ".utf8), .webp),
        (
            "bmp",
            Array("BM".utf8) + [UInt8](repeating: 0, count: 12) + [40, 0, 0, 0] + [UInt8](repeating: 0, count: 12), .bmp
        ),
        ("zip", [0x50, 0x4B, 0x03, 0x04, 20, 0], .zip),
        ("rtf", Array("{\\rtf1\\ansi\\ansicpg1252 Hello}".utf8), .rtf),
        ("text mentioning RTF", Array("Save it as {\\rtf1 in WordPad.".utf8), .text),
        ("gzip", [0x1F, 0x8B, 0x08, 0x00], .otherBinary),
        ("ELF", [0x7F, 0x45, 0x4C, 0x46, 2, 1, 1], .otherBinary),
        ("text", Array("Hello, world\n".utf8), .text),
        (
            "text starting with BM",
            Array("BMW sales rose this quarter, and so did the share price of everyone else.".utf8), .text
        ),
        ("text quoting a PDF header later", Array("A PDF starts with %PDF-1.4 in its first line.\n".utf8), .text),
        ("empty", [], .empty),
    ]

    @Test(arguments: cases.indices)
    func sniffsByMagicBytes(index: Int) {
        let sample = Self.cases[index]
        #expect(FormatSniffer.sniff(sample.bytes) == sample.format, "\(sample.name)")
    }

    @Test func committedSamplesAreRecognizedByContentNotName() throws {
        let expectations: [(String, DocumentFormat)] = [
            ("pdf/xz-utils-faq.pdf", .pdf), ("pdf/xz-faq-scanned.pdf", .pdf), ("images/xz-faq-page.png", .png),
            ("images/xz-faq-page.jpg", .jpeg), ("images/xz-faq-page.tiff", .tiff), ("bad/png-named.pdf", .png),
            ("bad/binary.txt", .text), ("text/zlib-faq.txt", .text), ("bad/zero-byte.txt", .empty),
            ("rtf/xz-lists.rtf", .rtf), ("odt/xz-lists.odt", .zip),
        ]
        for (path, format) in expectations {
            let bytes = [UInt8](try Data(contentsOf: Samples.url(path)))
            #expect(FormatSniffer.sniff(bytes) == format, "\(path)")
        }
    }

    @Test func registryRoutesByContent() throws {
        var configuration = PipelineConfiguration.Extract()
        configuration.isolate = false
        let registry = ExtractorRegistry.standard(configuration: configuration)
        func extractorName(_ path: String) throws -> String? {
            let url = Samples.url(path)
            return registry.extractor(
                for: ExtractionInput(key: path, fileURL: url, bytes: [UInt8](try Data(contentsOf: url)))
            )?.name
        }
        #expect(try extractorName("pdf/xz-utils-faq.pdf") == "pdf")
        #expect(try extractorName("bad/png-named.pdf") == "image")
        #expect(try extractorName("images/xz-faq-page.tiff") == "image")
        #expect(try extractorName("bad/binary.txt") == "text")
        #expect(try extractorName("rtf/xz-lists.rtf") == "rtf")
        #expect(try extractorName("odt/xz-lists.odt") == "odt")
    }

    @Test func textExtractorNamesAnUnhandledBinaryFormat() {
        let zip: [UInt8] = [0x50, 0x4B, 0x03, 0x04] + [UInt8](repeating: 0x41, count: 64)
        let error = #expect(throws: SluiceError.self) {
            try TextExtractor().extract(
                ExtractionInput(key: "a.txt", fileURL: URL(fileURLWithPath: "/a.txt"), bytes: zip)
            )
        }
        #expect(error?.code == .unsupportedFormat)
        #expect(error?.message.contains("ZIP archive") == true, "\(error?.message ?? "")")
        // RTF is recognised as such, not read as text with its control words.
        let rtf = Array("{\\rtf1\\ansi Hello}".utf8)
        let rtfError = #expect(throws: SluiceError.self) {
            try TextExtractor().extract(
                ExtractionInput(key: "a.txt", fileURL: URL(fileURLWithPath: "/a.txt"), bytes: rtf)
            )
        }
        #expect(rtfError?.message.contains("RTF document") == true, "\(rtfError?.message ?? "")")
    }
}
