import Foundation
import SluiceCore
import SluiceTesting
import Testing

@testable import SluiceExtract

/// The byte-level checks of text extraction keep the answers (and messages) of the code they replaced;
/// each is compared with a copy of it (2026-11-27).
@Suite struct TextExtractorTests {
    /// `rejectBinary` before it counted in one loop over the bytes.
    static func referenceRejectBinary(_ bytes: [UInt8]) -> String? {
        let sample = bytes.prefix(65_536)
        if let nul = sample.firstIndex(of: 0) { return "binary data, not text (NUL byte at offset \(nul))" }
        let controls = sample.reduce(0) { count, byte in
            count
                + ((byte < 0x20 && byte != 0x09 && byte != 0x0A && byte != 0x0D && byte != 0x0C) || byte == 0x7F
                    ? 1 : 0)
        }
        if controls * 10 > sample.count {
            return "binary data, not text (\(controls) control bytes in the first \(sample.count))"
        }
        return nil
    }

    static func rejection(_ bytes: [UInt8]) -> String? {
        do {
            try TextExtractor.rejectBinary(bytes)
            return nil
        } catch let error as SluiceError {
            return error.message
        } catch {
            return "\(error)"
        }
    }

    @Test func rejectBinaryMatchesTheReference() {
        var random = SplitMix64(seed: 14)
        // Text with a few controls, text with many, every byte value, long inputs past the 64 KiB sample.
        var inputs: [[UInt8]] = [[], [0], Array(0...255), Array(1...255), Array("plain text\n".utf8)]
        for round in 0..<600 {
            let length =
                round % 150 == 0
                ? Int.random(in: 60_000...140_000, using: &random)
                : Int.random(
                    in: 1...300,
                    using: &random
                )
            let controlShare = [0, 2, 9, 10, 11, 30, 100][round % 7]
            inputs.append(
                (0..<length).map { _ in
                    if Int.random(in: 0..<100, using: &random) < controlShare {
                        return [1, 7, 8, 9, 10, 11, 12, 13, 27, 31, 127, 0x0B][Int.random(in: 0..<12, using: &random)]
                    }
                    return round % 13 == 0 && Int.random(in: 0..<5_000, using: &random) == 0
                        ? 0 : UInt8.random(in: 0x20...0xFF, using: &random)
                }
            )
        }
        for bytes in inputs {
            #expect(Self.rejection(bytes) == Self.referenceRejectBinary(bytes), "\(bytes.prefix(40))")
        }
    }

    /// `looksLikeHTML` before it looked at the first visible byte: the lower-cased first KiB only.
    static func referenceLooksLikeHTML(_ bytes: [UInt8], extensionHint: Bool) -> Bool {
        let head = String(decoding: bytes.prefix(1024).map { $0 < 0x80 ? $0 : 0x20 }, as: UTF8.self).lowercased()
        guard let start = head.firstIndex(where: { !$0.isWhitespace }) else { return false }
        let text = head[start...]
        if text.hasPrefix("<!doctype html") || text.hasPrefix("<html") { return true }
        guard text.hasPrefix("<") else { return false }
        if extensionHint { return !bytes.prefix(8192).contains(0) }
        return text.contains("<html") || text.contains("<head") || text.contains("<body")
    }

    @Test func looksLikeHTMLMatchesTheReference() {
        var inputs: [String] = [
            "", "   ", "\r\n\t<html>", "<!DOCTYPE html><p>x", "  <HTML lang=en>", "<div><body>", "<div>plain</div>",
            "text <html>", "\u{1C}<html>", "\u{0B}\u{0C}<head>", "é<body>", "\u{00A0}<html>", "<", "<\u{0301}html>",
            "# Title\n<html>", "\u{0}<html>", "<?xml version='1.0'?><html>",
        ]
        var random = SplitMix64(seed: 16)
        let pieces = [
            "<", ">", "html", "HEAD", "body", " ", "\n", "\r\n", "\t", "é", "\u{1F}", "x", "!doctype ", "\u{0}",
        ]
        for _ in 0..<1_500 {
            inputs.append(
                (0..<Int.random(in: 0...12, using: &random)).map { _ in pieces.randomElement(using: &random)! }
                    .joined()
            )
        }
        inputs.append(String(repeating: " ", count: 1_100) + "<html>")
        for text in inputs {
            for hint in [false, true] {
                let bytes = Array(text.utf8)
                #expect(
                    HTMLSniffer.looksLikeHTML(bytes, extensionHint: hint)
                        == Self.referenceLooksLikeHTML(bytes, extensionHint: hint),
                    "\(text.debugDescription) hint \(hint)"
                )
            }
        }
    }

    /// `joiningCRLF` gives the text Foundation's `replacingOccurrences(of: "\r\n", with: "\n")` gave, except
    /// where a combining mark follows the LF: Foundation matched whole characters and left that CR LF alone.
    @Test func joiningCRLFMatchesFoundationsReplacement() {
        var inputs = ["", "\r", "\n", "\r\n", "\r\r\n", "\n\r", "\r\n\r\n", "a\r\nb\r", "é\r\n👍🏽\r\n", "\r\n\u{200D}"]
        var random = SplitMix64(seed: 21)
        let pieces = ["\r", "\n", "\r\n", "a", "é", "👍🏽", " ", "\u{FEFF}", "\t", "x\u{301}"]
        for _ in 0..<2_000 {
            inputs.append(
                (0..<Int.random(in: 0...14, using: &random)).map { _ in pieces.randomElement(using: &random)! }
                    .joined()
            )
        }
        for text in inputs {
            let joined = String(decoding: TextExtractor.joiningCRLF(Array(text.utf8)), as: UTF8.self)
            let expected = text.replacingOccurrences(of: "\r\n", with: "\n")
            #expect(Array(joined.unicodeScalars) == Array(expected.unicodeScalars), "\(text.debugDescription)")
        }
        // The one difference, on purpose: a line ending is one, whatever the next line starts with.
        #expect(
            String(decoding: TextExtractor.joiningCRLF(Array("a\r\n\u{301}b".utf8)), as: UTF8.self) == "a\n\u{301}b"
        )
        #expect("a\r\n\u{301}b".replacingOccurrences(of: "\r\n", with: "\n") == "a\r\n\u{301}b")
    }

    @Test func textWithCRLFLineEndingsIsExtractedWithLF() throws {
        let input = ExtractionInput(
            key: "crlf.txt",
            fileURL: URL(fileURLWithPath: "/corpus/crlf.txt"),
            bytes: Array("\u{FEFF}First line\r\nsecond\r\n\r\nthird\r".utf8)
        )
        let text = try TextExtractor().extract(input)
        #expect(text.sections.map(\.text) == ["First line\nsecond\n\nthird\r"])
        // An invalid byte's offset is counted in the file's bytes, CRs included.
        var invalid = input
        invalid.bytes = Array("one\r\ntwo\r\n".utf8) + [0xFF] + Array("\r\n".utf8)
        let error = #expect(throws: SluiceError.self) { try TextExtractor().extract(invalid) }
        #expect(error?.code == .invalidEncoding)
        #expect(
            error?.message.hasPrefix("invalid UTF-8 at byte offset 10 (1 bad byte)") == true,
            "\(String(describing: error))"
        )
    }
}
