import ArgumentParser
import Foundation
import SluiceChunk
import SluiceCore
import SluiceEmbed

/// `sluice-bench chunk`: the chunk stage alone, one thread: the recursive chunker over a corpus's texts (one
/// section per file, as plain text extracts), sized in the tokens of an OpenAI encoding (the remote path), of
/// MiniLM's WordPiece tokenizer (the local default) or of the word counter. MB/s and chunks, medians of
/// `--repeats`.
struct ChunkBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "chunk",
        abstract: "Recursive chunker throughput on one thread (MB/s), in cl100k/o200k, WordPiece or word tokens."
    )

    @Option(help: "A folder of text files (a corpus from `sluice-bench corpus`).") var corpus: String
    @Option(parsing: .upToNextOption, help: "Counters: cl100k_base, o200k_base, wordpiece (MiniLM's), words.")
    var counters = ["cl100k_base", "o200k_base", "wordpiece", "words"]
    @Option(help: "chunk.max_tokens.") var maxTokens = 256
    @Option(help: "chunk.overlap_tokens.") var overlapTokens = 32
    @Option(help: "Timed passes (the median is reported).") var repeats = 3

    func run() throws {
        let texts = try TokenizerBench.texts(in: corpus).map { ExtractedText(sections: [TextSection(text: $0)]) }
        let bytes = texts.reduce(0) { $0 + $1.sections.reduce(0) { $0 + $1.text.utf8.count } }
        print(
            "corpus \(corpus): \(texts.count) texts, \(f(Double(bytes) / 1e6, 2)) MB; max_tokens \(maxTokens), "
                + "overlap \(overlapTokens)"
        )
        for name in counters {
            let counter: any TokenCounter =
                switch name {
                case "words": WordTokenCounter()
                case "wordpiece": try MiniLMEmbedder(directory: MiniLMEmbedder.defaultDirectory(), threads: 1).tokenizer
                default: try BPETokenizer.named(name)
                }
            // Both of the chunker's ways, whichever the counter prefers (marked): each section counted once through
            // the cuts, or the same counter seen as a plain TokenCounter, every piece and chunk counted itself.
            var ways: [(String, any TokenCounter)] = [("counted per piece", PlainCounter(base: counter))]
            if let additive = counter as? any AdditiveTokenCounter {
                ways.insert(("counted once", CountedOnce(base: additive)), at: 0)
                ways[additive.prefersCountingOnce ? 0 : 1].0 += " (its way)"
            }
            for (way, sized) in ways {
                let chunker = RecursiveChunker(maxTokens: maxTokens, overlapTokens: overlapTokens, counter: sized)
                let chunks = texts.reduce(0) { $0 + chunker.chunk($1).count }
                var seconds: [Double] = []
                for _ in 0..<repeats {
                    seconds.append(TokenizerBench.timed { for text in texts { _ = chunker.chunk(text) } })
                }
                let rate = Double(bytes) / 1e6 / median(seconds)
                let passes = seconds.map { f($0, 3) }.joined(separator: " ")
                print("\(name), \(way): \(f(rate, 1)) MB/s, \(chunks) chunks (passes: \(passes) s)")
            }
        }
    }
}

/// An additive counter that prefers counting once, whatever its base prefers.
private struct CountedOnce: AdditiveTokenCounter {
    let base: any AdditiveTokenCounter
    func count(_ text: Substring) -> Int { base.count(text) }
    func count(_ text: Substring, cuts cut: (Int, Int) -> Void) -> Int { base.count(text, cuts: cut) }
    var prefersCountingOnce: Bool { true }
}

/// A counter without the additive path, whatever its base counts with.
private struct PlainCounter: TokenCounter {
    let base: any TokenCounter
    func count(_ text: Substring) -> Int { base.count(text) }
}
