import Foundation
import SluiceCore
import SluiceEmbed
import SluiceTesting
import Testing

/// The cuts a BPE tokenizer reports (``AdditiveTokenCounter``) are where counts add up: on real texts and the
/// parity fixtures, for both encodings, the count before each cut is the count of the prefix, and any text
/// split at a cut counts the sum of its parts (whatever the parts start and end with).
@Suite struct BPETokenizerCutTests {
    /// Real texts: the repository's samples, a few of Debian's documents, and the parity fixtures' texts.
    static let texts: [String] = {
        var texts = RealTexts.load(prefix: 6_000)
        texts += BPETokenizerTests.cl100k.cases.map(\.text) + BPETokenizerTests.o200k.cases.map(\.text)
        texts.append("end.\n\nNext (a)\r\n\r\nx/\n/y e\u{301}\nz! \n\"quoted.\"\n\nok'\nno")
        return texts
    }()

    @Test func realTextsArePresent() {
        #expect(Self.texts.count > 300)
    }

    @Test(arguments: BPETokenizer.supportedEncodings)
    func countsAddUpAtEveryCut(_ encoding: String) throws {
        let tokenizer = try BPETokenizer.named(encoding)
        var generator = SplitMix64(seed: 19)
        var cutsSeen = 0
        for text in Self.texts {
            let bytes = Array(text.utf8)
            var cuts: [(offset: Int, before: Int)] = []
            let total = tokenizer.count(text[...]) { cuts.append(($0, $1)) }
            #expect(total == tokenizer.count(text))
            cutsSeen += cuts.count
            for (offset, before) in cuts {
                // A white-space scalar after one that is not.
                #expect(isSpace(bytes, at: offset) && !isSpace(bytes, before: offset))
                #expect(tokenizer.count(slice(text, 0, offset)) == before, "prefix at \(offset)")
                // Any text around the cut: a random start before it and a random end after it.
                let start = generator.next(below: offset + 1, alignedIn: bytes)
                let after = offset + bytes.withUnsafeBufferPointer { UTF8Decoding.scalar(in: $0, at: offset).length }
                let end = after + generator.next(below: bytes.count - after + 1, alignedIn: bytes, from: after)
                let whole = tokenizer.count(slice(text, start, end))
                let parts = tokenizer.count(slice(text, start, offset)) + tokenizer.count(slice(text, offset, end))
                #expect(
                    whole == parts,
                    "\(encoding): \(slice(text, start, end).debugDescription) cut at \(offset - start)"
                )
            }
        }
        #expect(cutsSeen > 10_000)
    }

    @Test(arguments: BPETokenizer.supportedEncodings)
    func punctuationBeforeALineBreakIsNoCut(_ encoding: String) throws {
        let tokenizer = try BPETokenizer.named(encoding)
        let text = "end.\n\nNext word\r\nafter\n(x)\n"
        var cuts: [Int] = []
        _ = tokenizer.count(text[...]) { offset, _ in cuts.append(offset) }
        // After "end." and "(x)" the line breaks belong to the punctuation's piece: no cut there.
        #expect(cuts == [10, 15, 22])
    }

    private func slice(_ text: String, _ start: Int, _ end: Int) -> Substring {
        let utf8 = text.utf8
        let lower = utf8.index(utf8.startIndex, offsetBy: start)
        return text[lower..<utf8.index(lower, offsetBy: end - start)]
    }

    private func isSpace(_ bytes: [UInt8], at offset: Int) -> Bool {
        bytes.withUnsafeBufferPointer { UTF8Decoding.scalar(in: $0, at: offset).scalar.properties.isWhitespace }
    }

    private func isSpace(_ bytes: [UInt8], before offset: Int) -> Bool {
        bytes.withUnsafeBufferPointer {
            UTF8Decoding.scalar(in: $0, at: UTF8Decoding.scalarStart(in: $0, before: offset)).scalar.properties
                .isWhitespace
        }
    }
}

extension SplitMix64 {
    /// A random offset in `from..<from + bound` moved back to a scalar boundary of `bytes`, minus `from`.
    mutating func next(below bound: Int, alignedIn bytes: [UInt8], from: Int = 0) -> Int {
        var offset = from + Int(next() % UInt64(max(bound, 1)))
        while offset > from && offset < bytes.count && bytes[offset] & 0xC0 == 0x80 { offset -= 1 }
        return offset - from
    }
}
