import Foundation
import SluiceChunk
import SluiceCore
import SluiceEmbed
import SluiceTesting
import Testing

/// The chunker sized in cl100k_base and o200k_base tokens, which it counts once per section (the tokenizers
/// are additive counters): on real texts every chunk's count is still exactly the tokenizer's count of its
/// text, within the budget, and the chunks cover the text in order.
@Suite struct RecursiveChunkerBPETests {
    static let texts: [String] = {
        var texts = RealTexts.load()
        // Punctuation before line breaks (no cut there), CRLF, non-ASCII white space and letters.
        texts.append(
            String(
                repeating: "First line.\r\nSecond: (x)\n\nThird\u{3000}paragraph — naïve café's 'tis.\n\n\n",
                count: 40
            )
        )
        return texts
    }()

    @Test(arguments: BPETokenizer.supportedEncodings, [(64, 8), (256, 32), (7, 3)])
    func chunkCountsAreTheTokenizersCounts(_ encoding: String, _ budget: (Int, Int)) throws {
        let tokenizer = try BPETokenizer.named(encoding)
        let chunker = RecursiveChunker(maxTokens: budget.0, overlapTokens: budget.1, counter: tokenizer)
        #expect(Self.texts.count > 10)
        for text in Self.texts {
            let chunks = chunker.chunk(ExtractedText(sections: [TextSection(text: text)]))
            #expect(!chunks.isEmpty)
            var previousStart = -1
            for chunk in chunks {
                #expect(chunk.tokenCount == tokenizer.count(chunk.text), "\(encoding) chunk \(chunk.ordinal)")
                #expect(chunk.tokenCount <= budget.0)
                #expect(chunk.startOffset > previousStart)
                previousStart = chunk.startOffset
            }
        }
    }

    /// Counted once through the cuts (the tokenizers prefer it) or part by part, the chunks are the same.
    @Test(arguments: BPETokenizer.supportedEncodings)
    func countingOnceGivesTheChunksOfCountingEachPart(_ encoding: String) throws {
        let tokenizer = try BPETokenizer.named(encoding)
        #expect(tokenizer.prefersCountingOnce)
        let once = RecursiveChunker(maxTokens: 64, overlapTokens: 8, counter: tokenizer)
        let perPart = RecursiveChunker(maxTokens: 64, overlapTokens: 8, counter: PerPartCounter(base: tokenizer))
        for text in Self.texts {
            let document = ExtractedText(sections: [TextSection(text: text)])
            #expect(once.chunk(document) == perPart.chunk(document), "\(encoding)")
        }
    }
}

/// A counter without the additive path: the chunker counts every part it considers.
private struct PerPartCounter: TokenCounter {
    let base: any TokenCounter
    func count(_ text: Substring) -> Int { base.count(text) }
}
