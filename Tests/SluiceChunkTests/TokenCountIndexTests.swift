import Foundation
import SluiceCore
import SluiceTesting
import Synchronization
import Testing

@testable import SluiceChunk

/// The section index gives the counter's own count for every range, on real texts, while the chunker that
/// uses it counts each byte about once.
@Suite struct TokenCountIndexTests {
    /// The repository's sample texts and a few of Debian's documents, with ``SampleDocument``'s sections.
    static let texts: [String] = {
        RealTexts.load(prefix: 20_000) + SampleDocument.document.sections.map(\.text)
    }()

    static let counters: [WordTokenCounter] = [WordTokenCounter(), WordTokenCounter(maxWordLength: 3)]

    @Test(arguments: counters)
    func everyRangeCountsAsTheCounterCountsIt(_ counter: WordTokenCounter) {
        #expect(Self.texts.count > 10)
        var state: UInt64 = 25
        for text in Self.texts {
            let bytes = Array(text.utf8)
            let index = TokenCountIndex(counter: counter, text: text[...], length: bytes.count)
            for _ in 0..<300 {
                var a = Self.random(&state, below: bytes.count + 1, in: bytes)
                var b = Self.random(&state, below: bytes.count + 1, in: bytes)
                if a > b { swap(&a, &b) }
                let expected = counter.count(Self.slice(text, a..<b))
                #expect(index.count(a..<b) { counter.count(Self.slice(text, $0)) } == expected, "\(a)..<\(b)")
            }
        }
    }

    @Test(arguments: counters)
    func cutsAreWhereCountsAddUp(_ counter: WordTokenCounter) {
        for text in Self.texts {
            var cuts: [(Int, Int)] = []
            let total = counter.count(text[...]) { cuts.append(($0, $1)) }
            #expect(total == counter.count(text))
            for (offset, before) in cuts {
                #expect(counter.count(Self.slice(text, 0..<offset)) == before)
            }
        }
    }

    @Test func anAdditiveCounterIsCountedAboutOnce() {
        let text = Self.texts.joined(separator: "\n\n")
        let counter = MeteredAdditiveCounter()
        let chunker = RecursiveChunker(maxTokens: 256, overlapTokens: 32, counter: counter)
        let document = ExtractedText(sections: [TextSection(text: text)])
        let chunks = chunker.chunk(document)
        let passes = Double(counter.bytesCounted) / Double(text.utf8.count)
        // One pass for the index, a word at each end of each piece and chunk, and the words the overlap takes
        // (before the index: the section, the parts at every split level, then every chunk again).
        #expect(passes < 1.5, "the chunker counted the text \(passes) times over")
        expectChunkGuarantees(chunks, of: document, maxTokens: 256, overlapTokens: 32, counter: WordTokenCounter())
    }

    /// The word counter prefers counting each part (cheaper for it than the index's bookkeeping); counted
    /// once through its cuts instead, it gives the very same chunks.
    @Test(arguments: counters, [(256, 32), (64, 8), (7, 3)])
    func theWordCounterChunksTheSameCountedOnceOrPerPart(_ counter: WordTokenCounter, _ budget: (Int, Int)) {
        #expect(!counter.prefersCountingOnce)
        let once = MeteredAdditiveCounter(counter, prefersCountingOnce: true)
        let perPart = MeteredAdditiveCounter(counter, prefersCountingOnce: false)
        var chunked = 0
        for text in Self.texts {
            let document = ExtractedText(sections: [TextSection(text: text)])
            let chunks = RecursiveChunker(maxTokens: budget.0, overlapTokens: budget.1, counter: counter)
                .chunk(document)
            chunked += chunks.isEmpty ? 0 : 1
            #expect(
                RecursiveChunker(maxTokens: budget.0, overlapTokens: budget.1, counter: once).chunk(document) == chunks
            )
            #expect(
                RecursiveChunker(maxTokens: budget.0, overlapTokens: budget.1, counter: perPart).chunk(document)
                    == chunks
            )
        }
        #expect(chunked > 20)
        #expect(once.sectionsCountedOnce == Self.texts.count, "the index path was taken")
        #expect(perPart.sectionsCountedOnce == 0, "the per-part path was taken")
    }

    static func random(_ state: inout UInt64, below bound: Int, in bytes: [UInt8]) -> Int {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        var offset = Int((state >> 33) % UInt64(bound))
        while offset > 0 && offset < bytes.count && bytes[offset] & 0xC0 == 0x80 { offset -= 1 }
        return offset
    }

    static func slice(_ text: String, _ range: Range<Int>) -> Substring {
        let utf8 = text.utf8
        let lower = utf8.index(utf8.startIndex, offsetBy: range.lowerBound)
        return text[lower..<utf8.index(lower, offsetBy: range.count)]
    }
}

/// A word counter, adding up how many bytes it was asked to count (in both of its ways) and how many texts
/// it counted through their cuts; it prefers counting once or not as told.
final class MeteredAdditiveCounter: AdditiveTokenCounter {
    private let base: WordTokenCounter
    let prefersCountingOnce: Bool
    private let bytes = Atomic<Int>(0)
    private let countedOnce = Atomic<Int>(0)
    init(_ base: WordTokenCounter = WordTokenCounter(), prefersCountingOnce: Bool = true) {
        self.base = base
        self.prefersCountingOnce = prefersCountingOnce
    }
    func count(_ text: Substring) -> Int {
        bytes.add(text.utf8.count, ordering: .relaxed)
        return base.count(text)
    }
    func count(_ text: Substring, cuts cut: (Int, Int) -> Void) -> Int {
        bytes.add(text.utf8.count, ordering: .relaxed)
        countedOnce.add(1, ordering: .relaxed)
        return base.count(text, cuts: cut)
    }
    var bytesCounted: Int { bytes.load(ordering: .relaxed) }
    var sectionsCountedOnce: Int { countedOnce.load(ordering: .relaxed) }
}
