import Dispatch
import SluiceCore
import SluiceEmbed
import SluiceTesting
import Testing

/// The table of piece counts changes no count: a tokenizer with it counts every text as the same tokenizer
/// merging every piece, with the same cuts and counts before them — on real texts, the parity fixtures and a
/// generated text that reuses pieces heavily and has more distinct pieces than the table holds; with tables
/// of the default size and of 16 slots (where a slot changes hands all the time, so that a key compared
/// carelessly shows); on one thread and on several at once (a table per thread).
@Suite struct BPEPieceCountsTests {
    static let texts: [String] = {
        var texts = RealTexts.load()
        texts += BPETokenizerTests.cl100k.cases.map(\.text) + BPETokenizerTests.o200k.cases.map(\.text)
        texts += (0..<4).map { PieceRichText.make(words: 25_000, seed: UInt64($0)) }
        return texts
    }()

    /// The tokenizers under test: the default tables, and tables of 16 slots (made once: each has a key).
    static let tokenizers: [String: BPETokenizer] = {
        var tokenizers: [String: BPETokenizer] = [:]
        for encoding in BPETokenizer.supportedEncodings {
            guard let tokenizer = try? BPETokenizer.named(encoding) else { continue }
            tokenizers[encoding] = tokenizer
            tokenizers[encoding + "/16"] = tokenizer.withPieceCountTables(bits: 4)
        }
        return tokenizers
    }()

    static let variants = BPETokenizer.supportedEncodings.flatMap { [$0, $0 + "/16"] }

    /// The count and the cuts of `text`.
    static func counts(_ tokenizer: BPETokenizer, _ text: String) -> (total: Int, cuts: [Int]) {
        var cuts: [Int] = []
        let total = tokenizer.count(text[...]) { offset, before in cuts += [offset, before] }
        #expect(tokenizer.count(text) == total)
        return (total, cuts)
    }

    @Test(arguments: variants)
    func countsAreThoseOfMergingEveryPiece(_ encoding: String) throws {
        let tokenizer = try #require(Self.tokenizers[encoding])
        let reference = tokenizer.mergingEveryPiece()
        let before = tokenizer.pieceCountLookups ?? (0, 0)
        // Twice: the second pass finds what the first kept (and what was not evicted since).
        for pass in 0..<2 {
            for (index, text) in Self.texts.enumerated() {
                let expected = Self.counts(reference, text)
                let actual = Self.counts(tokenizer, text)
                #expect(actual.total == expected.total, "\(encoding) pass \(pass) text \(index)")
                #expect(actual.cuts == expected.cuts, "\(encoding) pass \(pass) text \(index)")
            }
        }
        // The table answered most lookups, and missed many (evictions and first sightings).
        let after = try #require(tokenizer.pieceCountLookups)
        let hits = after.hits - before.hits
        let misses = after.misses - before.misses
        if encoding.hasSuffix("/16") {
            #expect(hits > 10_000 && misses > 100_000, "\(hits) hits, \(misses) misses")
        } else {
            #expect(hits > 100_000 && misses > 20_000 && hits > misses, "\(hits) hits, \(misses) misses")
        }
        #expect(reference.pieceCountLookups == nil)
    }

    @Test func shortTextsAgreeToo() throws {
        // Pieces around the table's bounds (2, 3, 16 and 17 bytes), NUL bytes, the same stems.
        let texts = [
            "\u{0}\u{0}", " qzx", " abcdefghijklmno", " abcdefghijklmnop", " abcdefghijklmnopq", "!?\u{0}",
            "!?\u{0}\u{0}", "!?", " internationalize", " internationalise", " zorquae", " zorquaeph", "日本日本",
        ]
        for encoding in Self.variants {
            let tokenizer = try #require(Self.tokenizers[encoding])
            let reference = tokenizer.mergingEveryPiece()
            for _ in 0..<2 {
                for text in texts {
                    #expect(tokenizer.count(text) == reference.count(text), "\(encoding): \(text.debugDescription)")
                }
            }
        }
    }

    @Test(arguments: variants)
    func threadsCountingAtOnceGetTheSameCounts(_ encoding: String) throws {
        let tokenizer = try #require(Self.tokenizers[encoding])
        let texts = Self.texts.suffix(4) + RealTexts.load()
        let expected = texts.map { Self.counts(tokenizer.mergingEveryPiece(), $0).total }
        let results = UnsafeMutableBufferPointer<Int>.allocate(capacity: 4 * texts.count)
        results.initialize(repeating: -1)
        defer { results.deallocate() }
        nonisolated(unsafe) let shared = results
        DispatchQueue.concurrentPerform(iterations: 4) { thread in
            // Each thread in its own order, so that the threads' tables differ.
            let n = texts.count
            for step in 0..<n {
                let index = thread % 2 == 0 ? (step + thread) % n : (2 * n - 1 - step - thread) % n
                shared[thread * texts.count + index] = tokenizer.count(texts[texts.startIndex + index])
            }
        }
        for thread in 0..<4 {
            #expect(Array(results[(thread * texts.count)..<((thread + 1) * texts.count)]) == expected)
        }
    }
}
