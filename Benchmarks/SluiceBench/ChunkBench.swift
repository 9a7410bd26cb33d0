import ArgumentParser
import Foundation
import SluiceChunk
import SluiceCore
import SluiceEmbed
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// `sluice-bench chunk`: the chunk stage alone, one thread: the recursive chunker over a corpus's texts (one
/// section per file, as plain text extracts), sized in the tokens of an OpenAI encoding (the remote path), of
/// MiniLM's WordPiece tokenizer (the local default) or of the word counter. MB/s and chunks, medians of
/// `--repeats`, with the thread's CPU time of each pass. `--census` also counts what the chunker hands its counter:
/// the tokens counted per token of input (1 when each section is counted exactly once).
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
    @Option(parsing: .upToNextOption, help: "The chunker's ways to measure: once (through the cuts), per-piece.")
    var ways = ["once", "per-piece"]
    @Flag(help: "Also count the tokens and bytes the chunker has counted, per token and byte of input.")
    var census = false
    @Flag(help: "BPE: run the merge loop for every multi-token piece (no table of piece counts), as before it.")
    var mergeEveryPiece = false

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
                default:
                    mergeEveryPiece ? try BPETokenizer.named(name).mergingEveryPiece() : try BPETokenizer.named(name)
                }
            // Both of the chunker's ways, whichever the counter prefers (marked): each section counted once through
            // the cuts, or the same counter seen as a plain TokenCounter, every piece and chunk counted itself.
            var all: [(key: String, label: String, counter: any TokenCounter)] = [
                ("per-piece", "counted per piece", PlainCounter(base: counter))
            ]
            if let additive = counter as? any AdditiveTokenCounter {
                all.insert(("once", "counted once", CountedOnce(base: additive)), at: 0)
                all[additive.prefersCountingOnce ? 0 : 1].label += " (its way)"
            }
            for (_, way, sized) in all.filter({ ways.contains($0.key) }) {
                let chunker = RecursiveChunker(maxTokens: maxTokens, overlapTokens: overlapTokens, counter: sized)
                let lookups0 = (counter as? BPETokenizer)?.pieceCountLookups
                let chunks = texts.reduce(0) { $0 + chunker.chunk($1).count }
                let lookups1 = (counter as? BPETokenizer)?.pieceCountLookups
                var seconds: [Double] = []
                var cpu: [Double] = []
                for _ in 0..<repeats {
                    // Each pass from an empty table of piece counts, as a run's chunker starts (the same texts
                    // again would find every piece kept).
                    (counter as? BPETokenizer)?.removePieceCountsOfThisThread()
                    let cpuStart = Self.threadCPU()
                    seconds.append(TokenizerBench.timed { for text in texts { _ = chunker.chunk(text) } })
                    cpu.append(Self.threadCPU() - cpuStart)
                }
                let rate = Double(bytes) / 1e6 / median(seconds)
                let passes = seconds.map { f($0, 3) }.joined(separator: " ")
                print(
                    "\(name), \(way): \(f(rate, 1)) MB/s, \(chunks) chunks (passes: \(passes) s; "
                        + "CPU median \(f(median(cpu), 3)) s)"
                )
                if let lookups2 = (counter as? BPETokenizer)?.pieceCountLookups, let lookups1 {
                    Self.printLookups(
                        from: lookups0 ?? (0, 0),
                        lookups1,
                        lookups2,
                        tableBytes: (counter as? BPETokenizer)?.pieceCountTableBytes ?? 0
                    )
                }
                if census { Self.printCensus(of: texts, counter: counter, sized: sized, chunker: chunker) }
            }
        }
    }
}

extension ChunkBench {
    /// The table of piece counts' hit rates: in the first pass (from an empty table) and in the timed ones.
    static func printLookups(
        from start: (hits: Int, misses: Int),
        _ first: (hits: Int, misses: Int),
        _ end: (hits: Int, misses: Int),
        tableBytes: Int
    ) {
        func rate(_ hits: Int, _ misses: Int) -> String {
            "\(hits) of \(hits + misses) lookups answered (\(f(100 * Double(hits) / Double(max(hits + misses, 1)), 1))%)"
        }
        print(
            "  piece counts (\(tableBytes / 1024) KB a thread): first pass "
                + rate(first.hits - start.hits, first.misses - start.misses) + "; timed passes "
                + rate(end.hits - first.hits, end.misses - first.misses)
        )
    }

    /// The calling thread's CPU time, in seconds.
    static func threadCPU() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) * 1e-9
    }

    /// Chunks the texts once more with a counter that records every count, and prints the tokens and bytes
    /// counted per token and byte of input (the sections' own counts).
    static func printCensus(
        of texts: [ExtractedText],
        counter: any TokenCounter,
        sized: any TokenCounter,
        chunker: RecursiveChunker
    ) {
        let input = texts.reduce(0) { $0 + $1.sections.reduce(0) { $0 + counter.count($1.text) } }
        let inputBytes = texts.reduce(0) { $0 + $1.sections.reduce(0) { $0 + $1.text.utf8.count } }
        let census = Census()
        let recording: any TokenCounter =
            if let additive = sized as? any AdditiveTokenCounter {
                RecordingAdditiveCounter(base: additive, census: census)
            } else {
                RecordingCounter(base: sized, census: census)
            }
        let recorded = RecursiveChunker(
            maxTokens: chunker.maxTokens,
            overlapTokens: chunker.overlapTokens,
            counter: recording
        )
        for text in texts { _ = recorded.chunk(text) }
        let tally = census.tally.withLock { $0 }
        let tokens = tally.passTokens + tally.directTokens
        let bytes = tally.passBytes + tally.directBytes
        let tokenRatio = f(Double(tokens) / Double(max(input, 1)), 3)
        let byteRatio = f(Double(bytes) / Double(max(inputBytes, 1)), 3)
        print(
            "  census: input \(input) tokens, \(inputBytes) bytes; counted \(tokens) tokens, \(bytes) bytes: "
                + "\(tokenRatio) tokens and \(byteRatio) bytes per input token and byte"
        )
        print(
            "    passes with cuts: \(tally.passes) calls, \(tally.passTokens) tokens, \(tally.passBytes) bytes; "
                + "direct counts: \(tally.directCalls) calls, \(tally.directTokens) tokens, "
                + "\(tally.directBytes) bytes, of which \(tally.repeated) calls and \(tally.repeatedTokens) tokens "
                + "repeat a range counted directly before"
        )
    }
}

/// What a recording counter has seen.
private final class Census: Sendable {
    struct Tally {
        var passes = 0
        var passTokens = 0
        var passBytes = 0
        var directCalls = 0
        var directTokens = 0
        var directBytes = 0
        /// The direct counts whose range (in the text counted last with cuts) was counted directly before.
        var repeated = 0
        var repeatedTokens = 0
        var seen: Set<[Int]> = []
    }
    let tally = Mutex(Tally())
}

/// A counter that records each count it makes in a ``Census``.
private struct RecordingCounter: TokenCounter {
    let base: any TokenCounter
    let census: Census
    func count(_ text: Substring) -> Int {
        let tokens = base.count(text)
        let start = text.base.utf8.distance(from: text.base.utf8.startIndex, to: text.startIndex)
        census.tally.withLock {
            if !$0.seen.insert([start, text.utf8.count]).inserted {
                $0.repeated += 1
                $0.repeatedTokens += tokens
            }
            $0.directCalls += 1
            $0.directTokens += tokens
            $0.directBytes += text.utf8.count
        }
        return tokens
    }
}

/// An additive counter that records each count and each pass with cuts it makes in a ``Census``.
private struct RecordingAdditiveCounter: AdditiveTokenCounter {
    let base: any AdditiveTokenCounter
    let census: Census
    func count(_ text: Substring) -> Int { RecordingCounter(base: base, census: census).count(text) }
    func count(_ text: Substring, cuts cut: (Int, Int) -> Void) -> Int {
        let tokens = base.count(text, cuts: cut)
        census.tally.withLock {
            $0.seen = []
            $0.passes += 1
            $0.passTokens += tokens
            $0.passBytes += text.utf8.count
        }
        return tokens
    }
    var prefersCountingOnce: Bool { base.prefersCountingOnce }
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
