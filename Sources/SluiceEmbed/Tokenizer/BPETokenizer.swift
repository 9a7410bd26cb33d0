import Foundation
import SluiceCore
import Synchronization

/// OpenAI's byte-pair-encoding tokenizers (cl100k_base, o200k_base), in Swift: exact token ids and counts, as
/// tiktoken's `encode_ordinary` gives them (special-token text is plain text).
///
/// Used as the ``TokenCounter`` of OpenAI embedders, so the chunker sizes chunks in the model's own
/// tokens and batches respect the provider's token limits exactly. The rank file comes from the cache
/// (`scripts/fetch/20-tiktoken.sh`), loaded once per process.
public struct BPETokenizer: TokenCounter {
    /// The encoding's name, such as `cl100k_base`.
    public let name: String
    private let ranks: BPERanks
    private let isO200k: Bool

    /// The encodings this tokenizer implements.
    public static let supportedEncodings = ["cl100k_base", "o200k_base"]

    /// The tokenizer for an encoding, loading its rank file from `SLUICE_CACHE_DIR/tiktoken` (default
    /// `~/.cache/sluice/tiktoken`) the first time.
    /// - Throws: ``SluiceError/Code/configuration`` if the encoding is unknown or its file is missing.
    public static func named(_ name: String) throws -> BPETokenizer {
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
    public static func rankFile(_ name: String) -> URL {
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
    }

    /// The token ids of `text`.
    public func encode(_ text: Substring) -> [Int] {
        var ids: [Int] = []
        forEachPiece(text) { piece in
            mergeParts(piece) { range in ids.append(Int(ranks.rank(piece[range])!)) }
        }
        return ids
    }

    /// The number of tokens of `text`.
    public func count(_ text: Substring) -> Int {
        var total = 0
        forEachPiece(text) { piece in
            if ranks.rank(piece[...]) != nil {
                total += 1
            } else {
                mergeParts(piece) { _ in total += 1 }
            }
        }
        return total
    }

    /// Calls `body` with the UTF-8 bytes of each pre-tokenizer piece.
    private func forEachPiece(_ text: Substring, _ body: (UnsafeBufferPointer<UInt8>) -> Void) {
        let scalars = Array(text.unicodeScalars)
        guard !scalars.isEmpty else { return }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(64)
        let piece = { (range: Range<Int>) in
            bytes.removeAll(keepingCapacity: true)
            for scalar in scalars[range] { bytes.append(contentsOf: UTF8.encode(scalar)!) }
            bytes.withUnsafeBufferPointer { body($0) }
        }
        if isO200k {
            O200kPreTokenizer.split(scalars, kinds: scalars.map(O200kPreTokenizer.kind), piece)
        } else {
            Cl100kPreTokenizer.split(scalars, kinds: scalars.map(Cl100kPreTokenizer.kind), piece)
        }
    }

    /// tiktoken's `byte_pair_merge`: repeatedly merges the adjacent pair of lowest rank; calls `body`
    /// with the byte range of each final token, in order.
    private func mergeParts(_ piece: UnsafeBufferPointer<UInt8>, _ body: (Range<Int>) -> Void) {
        let n = piece.count
        if n == 1 || ranks.rank(piece[...]) != nil {
            body(0..<n)
            return
        }
        let none = Int32.max
        // parts[i] = (start of part i, rank of merging part i with part i+1)
        var starts = Array(0...n)
        var pairRanks = [Int32](repeating: none, count: n + 1)
        for i in 0..<(n - 1) { pairRanks[i] = ranks.rank(piece[i..<(i + 2)]) ?? none }

        func rankAfterMerge(_ i: Int) -> Int32 {
            // The rank of part i joined with the two parts after it (i+1 is merged into i).
            guard i + 3 < starts.count else { return none }
            return ranks.rank(piece[starts[i]..<starts[i + 3]]) ?? none
        }

        while true {
            var best = none
            var at = -1
            for i in 0..<(starts.count - 1) where pairRanks[i] < best {
                best = pairRanks[i]
                at = i
            }
            if at < 0 { break }
            if at > 0 { pairRanks[at - 1] = rankAfterMerge(at - 1) }
            pairRanks[at] = rankAfterMerge(at)
            starts.remove(at: at + 1)
            pairRanks.remove(at: at + 1)
        }
        for i in 0..<(starts.count - 1) { body(starts[i]..<starts[i + 1]) }
    }
}
