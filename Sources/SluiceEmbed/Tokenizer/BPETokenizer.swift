import Foundation
import SluiceCore
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// OpenAI's byte-pair-encoding tokenizers (cl100k_base, o200k_base), in Swift: exact token ids and counts, as
/// tiktoken's `encode_ordinary` gives them (special-token text is plain text).
///
/// Used as the ``TokenCounter`` of OpenAI embedders, so the chunker sizes chunks in the model's own
/// tokens and batches respect the provider's token limits exactly. The rank file comes from the cache
/// (`scripts/fetch/20-tiktoken.sh`), loaded once per process.
package struct BPETokenizer: AdditiveTokenCounter {
    /// The encoding's name, such as `cl100k_base`.
    package let name: String
    private let ranks: BPERanks
    private let isO200k: Bool
    /// The counts of multi-token pieces already merged, a table per thread; nil: merge every piece.
    private var pieceCounts: BPEPieceCounts.PerThread?

    /// The encodings this tokenizer implements.
    package static let supportedEncodings = ["cl100k_base", "o200k_base"]

    /// The tokenizer for an encoding, loading its rank file from `SLUICE_CACHE_DIR/tiktoken` (default
    /// `~/.cache/sluice/tiktoken`) the first time.
    /// - Throws: ``SluiceError/Code/configuration`` if the encoding is unknown or its file is missing.
    package static func named(_ name: String) throws -> BPETokenizer {
        guard supportedEncodings.contains(name) else {
            throw SluiceError(
                .configuration,
                "tokenizer '\(name)' is not supported (supported: \(supportedEncodings.joined(separator: ", ")))"
            )
        }
        return try loaded.withLock { cache in
            if let tokenizer = cache[name] { return tokenizer }
            let tokenizer = BPETokenizer(name: name, ranks: try BPERanks(contentsOf: rankFile(name)))
            cache[name] = tokenizer
            return tokenizer
        }
    }

    private static let loaded = Mutex<[String: BPETokenizer]>([:])

    /// Where the rank file of an encoding is expected.
    package static func rankFile(_ name: String) -> URL {
        let environment = ProcessInfo.processInfo.environment
        let cache =
            environment["SLUICE_CACHE_DIR"].map { URL(fileURLWithPath: $0) }
            ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".cache/sluice")
        return cache.appendingPathComponent("tiktoken").appendingPathComponent("\(name).tiktoken")
    }

    private init(name: String, ranks: BPERanks) {
        self.name = name
        self.ranks = ranks
        self.isO200k = name == "o200k_base"
        self.pieceCounts = BPEPieceCounts.PerThread()
    }

    /// The same tokenizer without the table of piece counts: it runs the merge loop for every multi-token
    /// piece it counts (the reference the table is tested against, and the bench's comparison).
    package func mergingEveryPiece() -> BPETokenizer {
        var tokenizer = self
        tokenizer.pieceCounts = nil
        return tokenizer
    }

    /// The same tokenizer with tables of piece counts of `1 << bits` slots (tests: a table of a few slots has
    /// its slots taken by other pieces all the time). Each call makes a thread-specific key for the process's
    /// lifetime: keep the tokenizer it returns.
    package func withPieceCountTables(bits: Int) -> BPETokenizer {
        var tokenizer = self
        tokenizer.pieceCounts = BPEPieceCounts.PerThread(bits: bits)
        return tokenizer
    }

    /// The calling thread's lookups in this tokenizer's table of piece counts so far: those it answered and
    /// those that ran the merge loop; nil without a table or before the thread's first count.
    package var pieceCountLookups: (hits: Int, misses: Int)? {
        guard let counts = pieceCounts?.current else { return nil }
        return (counts.hits, counts.misses)
    }

    /// Empties the calling thread's table of piece counts (a benchmark's passes each start as a run's first).
    package func removePieceCountsOfThisThread() {
        pieceCounts?.current?.removeAll()
    }

    /// The bytes of one thread's table of piece counts.
    package var pieceCountTableBytes: Int { pieceCounts.map { BPEPieceCounts.bytes(bits: $0.bits) } ?? 0 }

    /// The token ids of `text`.
    package func encode(_ text: Substring) -> [Int] {
        UTF8Decoding.withBytes(of: text) { bytes in
            var ids: [Int] = []
            ids.reserveCapacity(bytes.count / 3)
            forEachPiece(bytes) { start, length, readable in
                let whole = ranks.rank(start, length, readable: readable)
                if whole != BPERanks.none {
                    ids.append(Int(whole))
                } else {
                    mergeParts(start, length, readable: readable) { ids.append(Int($0)) }
                }
            }
            return ids
        }
    }

    /// The number of tokens of `text`.
    package func count(_ text: Substring) -> Int {
        UTF8Decoding.withBytes(of: text) { bytes in
            var total = 0
            let counts = pieceCounts?.current
            forEachPiece(bytes) { start, length, readable in
                total += tokens(start, length, readable: readable, counts)
            }
            return total
        }
    }

    /// The number of tokens of `text`, reporting the cuts where counts add up (see ``AdditiveTokenCounter``):
    /// white space after a scalar that is not, unless the scalar is punctuation and the white space a line
    /// break (tiktoken's pieces of punctuation take the line breaks after them).
    package func count(_ text: Substring, cuts cut: (_ offset: Int, _ tokensBefore: Int) -> Void) -> Int {
        UTF8Decoding.withBytes(of: text) { bytes in
            var total = 0
            let counts = pieceCounts?.current
            forEachPiece(bytes) { start, length, readable in
                total += tokens(start, length, readable: readable, counts)
                // Every cut is the end of a piece: the pieces on either side of it are those of the parts.
                let end = bytes.count - readable + length
                if end < bytes.count && isCut(bytes, at: end) { cut(end, total) }
            }
            return total
        }
    }

    /// Whether the piece boundary at `offset` (inside `bytes`) is a cut.
    private func isCut(_ bytes: UnsafeBufferPointer<UInt8>, at offset: Int) -> Bool {
        let next = bytes[offset]
        let nextIsWhitespace =
            next < 0x80
            ? ASCII.isWhitespace(next) : UTF8Decoding.scalar(in: bytes, at: offset).scalar.properties.isWhitespace
        guard nextIsWhitespace, offset > 0 else { return false }
        let previousStart = UTF8Decoding.scalarStart(in: bytes, before: offset)
        let previous = UTF8Decoding.scalar(in: bytes, at: previousStart).scalar
        // White_Space of an ASCII scalar by table (the property lookup was 3% of a latency-bound run's CPU).
        let previousIsWhitespace =
            previous.value < 0x80 ? ASCII.isWhitespace(UInt8(previous.value)) : previous.properties.isWhitespace
        if previousIsWhitespace { return false }
        guard next == 10 || next == 13 else { return true }
        if isO200k { return !O200kPreTokenizer.kind(previous).isPunctuation }
        let kind = Cl100kPreTokenizer.kind(previous)
        return kind != .other && kind != .apostrophe
    }

    /// The number of tokens of one piece: one if it is a token, else the count kept in `counts` or that of
    /// the merge loop. A piece that is not a token has two bytes or more.
    @inline(__always)
    private func tokens(_ start: UnsafePointer<UInt8>, _ length: Int, readable: Int, _ counts: BPEPieceCounts?) -> Int {
        if ranks.rank(start, length, readable: readable) != BPERanks.none { return 1 }
        // Two bytes that are not a token are two tokens of one byte each.
        if length == 2 { return 2 }
        let merge = {
            var count = 0
            mergeParts(start, length, readable: readable) { _ in count += 1 }
            return count
        }
        if let counts, length <= BPEPieceCounts.maxBytes {
            return counts.count(start, length, readable: readable, merge: merge)
        }
        return merge()
    }

    /// Calls `body` with the start, length and readable bytes (up to the end of the text) of each
    /// pre-tokenizer piece: the pieces are the text's own bytes, never copied.
    @inline(__always)
    private func forEachPiece(
        _ bytes: UnsafeBufferPointer<UInt8>,
        _ body: (UnsafePointer<UInt8>, Int, Int) -> Void
    ) {
        guard let base = bytes.baseAddress else { return }
        let piece = { (range: Range<Int>) in
            body(base + range.lowerBound, range.count, bytes.count - range.lowerBound)
        }
        if isO200k {
            O200kPreTokenizer.split(bytes, piece)
        } else {
            Cl100kPreTokenizer.split(bytes, piece)
        }
    }

    /// tiktoken's `byte_pair_merge` on a piece of two bytes or more that is not a token itself: repeatedly
    /// merges the adjacent pair of lowest rank (the leftmost of equal ranks); calls `body` with the rank of
    /// each final token, in order. Works in a scratch buffer on the stack (on the heap for long pieces).
    private func mergeParts(
        _ piece: UnsafePointer<UInt8>,
        _ n: Int,
        readable: Int,
        _ body: (UInt32) -> Void
    ) {
        if n >= BPERanks.longPieceBytes { return ranks.mergeLongPiece(piece, n, readable: readable, body) }
        let none = BPERanks.none
        withUnsafeTemporaryAllocation(of: Part.self, capacity: n + 1) { parts in
            // parts[i] = (start of part i, rank of merging part i with part i+1)
            for i in 0..<(n - 1) {
                parts[i] = Part(start: Int32(i), rank: ranks.rank(piece + i, 2, readable: 2))
            }
            parts[n - 1] = Part(start: Int32(n - 1), rank: none)
            parts[n] = Part(start: Int32(n), rank: none)
            var count = n + 1

            // The rank of part i joined with the part after it, once i+1 has absorbed i+2.
            func rankAfterMerge(_ i: Int) -> UInt32 {
                guard i + 3 < count else { return none }
                let start = Int(parts[i].start)
                return ranks.rank(piece + start, Int(parts[i + 3].start) - start, readable: readable - start)
            }

            while true {
                var best = none
                var at = -1
                for i in 0..<(count - 1) where parts[i].rank < best {
                    best = parts[i].rank
                    at = i
                }
                if at < 0 { break }
                if at > 0 { parts[at - 1].rank = rankAfterMerge(at - 1) }
                parts[at].rank = rankAfterMerge(at)
                // Remove part at+1.
                let tail = count - (at + 2)
                if tail > 0 {
                    memmove(parts.baseAddress! + at + 1, parts.baseAddress! + at + 2, tail * MemoryLayout<Part>.stride)
                }
                count -= 1
            }
            for i in 0..<(count - 1) {
                let start = Int(parts[i].start)
                body(ranks.rank(piece + start, Int(parts[i + 1].start) - start, readable: readable - start))
            }
        }
    }

    private struct Part {
        var start: Int32
        var rank: UInt32
    }
}
