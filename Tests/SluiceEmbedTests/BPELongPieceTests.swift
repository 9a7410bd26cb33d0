import Foundation
import SluiceCore
import Testing

@testable import SluiceEmbed

/// Pieces from ``BPERanks/longPieceBytes`` bytes on are merged through a heap (`BPERanks+LongPieces.swift`):
/// the same tokens as tiktoken on pieces thousands of bytes long (ids from scripts/tools/tiktoken_long_pieces.py),
/// and the same tokens as the scan on every piece of the parity texts, whatever its length.
@Suite struct BPELongPieceTests {
    struct Case: Decodable, Sendable {
        var text: String
        var ids: [Int]
    }

    struct Fixture: Decodable {
        var encodings: [String: [Case]]
    }

    static let fixture: Fixture = {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
            "Fixtures/long_pieces.json"
        )
        // A missing or broken fixture fails the tests below (no cases is a failure too).
        guard let data = try? Data(contentsOf: url), let fixture = try? JSONDecoder().decode(Fixture.self, from: data)
        else { return Fixture(encodings: [:]) }
        return fixture
    }()

    @Test(arguments: BPETokenizer.supportedEncodings)
    func longPiecesMatchTheReference(_ encoding: String) throws {
        let tokenizer = try BPETokenizer.named(encoding)
        let cases = Self.fixture.encodings[encoding] ?? []
        #expect(cases.count >= 10)
        var long = 0
        for reference in cases {
            var longest = 0
            Self.pieces(of: reference.text, encoding) { longest = max(longest, $0.count) }
            if longest >= 500 { long += 1 }
            #expect(tokenizer.encode(reference.text[...]) == reference.ids, "\(reference.text.prefix(20))")
            #expect(tokenizer.count(reference.text) == reference.ids.count)
        }
        // Mixed case splits o200k's pieces, digits cl100k's: most texts, not all, have a long piece in both.
        #expect(long >= 8, "texts with a piece of 500 bytes or more")
    }

    /// The heap's merge of every piece of the parity texts (short ones, which the tokenizer merges by the scan,
    /// and long ones) gives the tokenizer's ids.
    @Test(arguments: BPETokenizer.supportedEncodings)
    func theHeapMergesEveryPieceAsTheScanDoes(_ encoding: String) throws {
        let tokenizer = try BPETokenizer.named(encoding)
        let ranks = try BPERanks(contentsOf: BPETokenizer.rankFile(encoding))
        let parity = encoding == "cl100k_base" ? BPETokenizerTests.cl100k : BPETokenizerTests.o200k
        let texts = parity.cases.map(\.text) + (Self.fixture.encodings[encoding] ?? []).map(\.text)
        #expect(texts.count > 100)
        var merged = 0
        for text in texts {
            var ids: [Int] = []
            Self.pieces(of: text, encoding) { piece in
                piece.withUnsafeBufferPointer { bytes in
                    let start = bytes.baseAddress!
                    let whole = ranks.rank(start, bytes.count, readable: bytes.count)
                    if whole != BPERanks.none {
                        ids.append(Int(whole))
                    } else {
                        merged += 1
                        ranks.mergeLongPiece(start, bytes.count, readable: bytes.count) { ids.append(Int($0)) }
                    }
                }
            }
            #expect(ids == tokenizer.encode(text[...]), "\(text.prefix(40).debugDescription)")
        }
        #expect(merged > 100, "pieces that are not one token")
    }

    /// The pre-tokenizer's pieces of `text`, as bytes.
    static func pieces(of text: String, _ encoding: String, _ body: ([UInt8]) -> Void) {
        let bytes = Array(text.utf8)
        bytes.withUnsafeBufferPointer { buffer in
            let piece = { (range: Range<Int>) in body(Array(buffer[range])) }
            if encoding == "o200k_base" {
                O200kPreTokenizer.split(buffer, piece)
            } else {
                Cl100kPreTokenizer.split(buffer, piece)
            }
        }
    }
}
