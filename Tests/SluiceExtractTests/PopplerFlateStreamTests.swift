import CZlib
import Foundation
import SluiceExtract
import SluiceTesting
import Testing

/// FlateDecode streams inflated by zlib in place of poppler's own decoder (PopplerFlateStream.h): the same
/// bytes as poppler's decoder on valid and truncated streams, a prefix of them on damaged ones, and the page
/// text after an inline image intact.
@Suite struct PopplerFlateStreamTests {
    /// Both decoders over the same bytes, in blocks and one character at a time.
    private static func decode(_ bytes: [UInt8], with inflater: PDFStreamInflater, byteAtATime: Bool) -> [UInt8] {
        inflater.decode(bytes, byteAtATime: byteAtATime)
    }

    private static func compress(_ data: [UInt8], level: Int32) -> [UInt8] {
        var capacity = compressBound(uLong(data.count))
        var out = [UInt8](repeating: 0, count: Int(capacity))
        let status = data.withUnsafeBufferPointer { source in
            compress2(&out, &capacity, source.baseAddress, uLong(data.count), level)
        }
        precondition(status == Z_OK)
        return Array(out.prefix(Int(capacity)))
    }

    /// Text-like bytes (words from a small vocabulary, so that the compressor finds matches) with some noise.
    private static func text(count: Int, seed: UInt64) -> [UInt8] {
        var generator = SplitMix64(seed: seed)
        let words = ["stream", "endobj", "BT", "ET", "Tj", "0 0 1 rg", "(Sluice)", "12 Tf", "q", "Q", "cm", "\n"]
        var out: [UInt8] = []
        out.reserveCapacity(count)
        while out.count < count {
            if generator.next() % 7 == 0 {
                out.append(UInt8(truncatingIfNeeded: generator.next()))
            } else {
                out += Array(words[Int(generator.next() % UInt64(words.count))].utf8)
                out.append(0x20)
            }
        }
        return Array(out.prefix(count))
    }

    /// Stored (level 0), fixed-code (small inputs) and dynamic-code blocks, across sizes that straddle the
    /// decoders' buffers (32 KiB window, 64 KiB output block).
    @Test(arguments: [0, 1, 100, 4_000, 70_000, 300_000], [0, 1, 6, 9] as [Int32])
    func validStreamsDecodeToTheSameBytes(size: Int, level: Int32) {
        let original = Self.text(count: size, seed: UInt64(size) &* 31 &+ UInt64(level))
        let compressed = Self.compress(original, level: level)
        for byteAtATime in [false, true] {
            let zlib = Self.decode(compressed, with: .zlib, byteAtATime: byteAtATime)
            let poppler = Self.decode(compressed, with: .poppler, byteAtATime: byteAtATime)
            #expect(zlib == original, "zlib, size \(size), level \(level)")
            #expect(poppler == original, "poppler, size \(size), level \(level)")
        }
    }

    /// Cut anywhere (in the header, inside a block, in the checksum), both give the bytes decoded so far.
    @Test(arguments: [0, 1, 6] as [Int32])
    func truncatedStreamsDecodeToTheSamePrefix(level: Int32) {
        let original = Self.text(count: 90_000, seed: 7 &+ UInt64(level))
        let compressed = Self.compress(original, level: level)
        var generator = SplitMix64(seed: 11)
        let cuts =
            [0, 1, 2, 3, 10, compressed.count - 4, compressed.count - 1]
            + (0..<40).map { _ in Int(generator.next() % UInt64(compressed.count)) }
        for cut in cuts {
            let truncated = Array(compressed.prefix(cut))
            let zlib = Self.decode(truncated, with: .zlib, byteAtATime: false)
            let poppler = Self.decode(truncated, with: .poppler, byteAtATime: false)
            #expect(
                zlib == poppler,
                "cut at \(cut) of \(compressed.count): \(zlib.count) against \(poppler.count) bytes"
            )
            #expect(original.starts(with: zlib))
        }
    }

    /// A wrong Adler-32 changes nothing (neither decoder checks it); a bad header gives nothing from either.
    @Test func checksumIsIgnoredAndHeaderChecked() {
        let original = Self.text(count: 5_000, seed: 3)
        var compressed = Self.compress(original, level: 6)
        compressed[compressed.count - 1] ^= 0xFF
        #expect(Self.decode(compressed, with: .zlib, byteAtATime: false) == original)
        #expect(Self.decode(compressed, with: .poppler, byteAtATime: false) == original)
        for header: [UInt8] in [[0x78, 0x9D], [0x77, 0x9C], [0x78, 0xBB]] {  // FCHECK, method, FDICT
            var bad = compressed
            bad.replaceSubrange(0..<2, with: header)
            #expect(Self.decode(bad, with: .zlib, byteAtATime: false).isEmpty, "\(header)")
            #expect(Self.decode(bad, with: .poppler, byteAtATime: false).isEmpty, "\(header)")
        }
    }

    /// Damaged streams: zlib stops at the first error it detects; poppler's decoder detects no more than
    /// zlib, so what zlib gives is a prefix of what poppler's gives.
    @Test func damagedStreamsGiveAPrefixOfPopplersBytes() {
        let original = Self.text(count: 60_000, seed: 5)
        let compressed = Self.compress(original, level: 6)
        var generator = SplitMix64(seed: 29)
        for _ in 0..<200 {
            var damaged = compressed
            for _ in 0..<(1 + Int(generator.next() % 3)) {
                let at = 2 + Int(generator.next() % UInt64(compressed.count - 2))
                damaged[at] ^= UInt8(truncatingIfNeeded: 1 | generator.next())
            }
            let zlib = Self.decode(damaged, with: .zlib, byteAtATime: false)
            let poppler = Self.decode(damaged, with: .poppler, byteAtATime: false)
            #expect(poppler.starts(with: zlib), "zlib \(zlib.count) bytes, poppler \(poppler.count)")
        }
    }

    /// Extracting a real PDF's text goes through zlib (the definition in this executable replaced poppler's:
    /// ELF symbol interposition, so Linux only; elsewhere poppler keeps its own inflater).
    #if os(Linux)
    @Test func documentsAreInflatedByZlib() throws {
        let before = PDFStreamInflater.zlibStreamsInflated
        let document = try PDFDocument(path: Self.samples.appendingPathComponent("pdf/zlib-two-column.pdf").path)
        _ = try document.text(ofPage: 0)
        #expect(PDFStreamInflater.zlibStreamsInflated > before)
    }
    #endif

    /// An inline image's compressed bytes sit inside the page's content, followed by `EI` and the rest of the
    /// page; a decoder that read ahead of what it decodes would swallow the text after the image.
    @Test(arguments: [false, true])
    func textAfterAFlateInlineImageIsKept(compressedContent: Bool) throws {
        let directory = try TemporaryDirectory.make("sluice-inline-image")
        defer { TemporaryDirectory.remove(directory) }
        let pixels = [UInt8]((0..<(64 * 64)).map { UInt8(truncatingIfNeeded: $0 &* 37) })
        let image = Self.compress(pixels, level: 9)
        var content = Array("BT /F1 12 Tf 72 720 Td (Before the image) Tj ET\nq 64 0 0 64 72 600 cm\n".utf8)
        content += Array("BI /W 64 /H 64 /CS /G /BPC 8 /F /Fl ID ".utf8) + image + Array("\nEI Q\n".utf8)
        content += Array("BT /F1 12 Tf 72 500 Td (After the image) Tj ET\n".utf8)
        let path = directory.appendingPathComponent("inline.pdf").path
        try Self.pdf(
            content: compressedContent ? Self.compress(content, level: 6) : content,
            filter: compressedContent
        ).write(to: URL(fileURLWithPath: path))
        let document = try PDFDocument(path: path)
        let text = try document.text(ofPage: 0)
        #expect(text.contains("Before the image"))
        #expect(text.contains("After the image"), "\(text)")
    }

    private static let samples = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("samples")

    /// A one-page PDF with `content` as its page's content stream and Helvetica as /F1.
    private static func pdf(content: [UInt8], filter: Bool) -> Data {
        var out = Data("%PDF-1.4\n".utf8)
        var offsets: [Int] = []
        func object(_ body: [UInt8]) {
            offsets.append(out.count)
            out += Data("\(offsets.count) 0 obj\n".utf8) + Data(body) + Data("\nendobj\n".utf8)
        }
        object(Array("<< /Type /Catalog /Pages 2 0 R >>".utf8))
        object(Array("<< /Type /Pages /Kids [3 0 R] /Count 1 >>".utf8))
        object(
            Array(
                ("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R"
                    + " /Resources << /Font << /F1 5 0 R >> >> >>").utf8
            )
        )
        object(
            Array("<< /Length \(content.count)\(filter ? " /Filter /FlateDecode" : "") >>\nstream\n".utf8)
                + content + Array("\nendstream".utf8)
        )
        object(Array("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>".utf8))
        let xref = out.count
        out += Data("xref\n0 \(offsets.count + 1)\n0000000000 65535 f \n".utf8)
        for offset in offsets { out += Data(String(format: "%010d 00000 n \n", offset).utf8) }
        out += Data("trailer\n<< /Size \(offsets.count + 1) /Root 1 0 R >>\nstartxref\n\(xref)\n%%EOF\n".utf8)
        return out
    }
}
