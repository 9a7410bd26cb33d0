import Foundation

/// One shard of a run split across machines (docs/DESIGN.md §8): a run with shard K of N owns exactly the
/// documents whose key hashes to K, so N workers, each with its own state directory and all writing to
/// one shared sink, together equal one big run.
///
/// The assignment is XXH3-64 of the document key (UTF-8, seed ``seed``) modulo N: it depends on nothing
/// but the key and N, so every worker agrees without talking to the others, and a document stays in its
/// shard for as long as N does.
public struct Shard: Sendable, Hashable, CustomStringConvertible {
    /// From 0 to `count - 1` (Kubernetes' `JOB_COMPLETION_INDEX` can be passed as it is).
    public let index: Int
    public let count: Int

    /// Fixed for good: changing it would move documents between shards of existing deployments.
    public static let seed: UInt64 = 0

    /// The whole corpus (what an unsharded run owns).
    public static let whole = try! Shard(index: 0, count: 1)

    /// - Throws: ``SluiceError/Code/usage`` unless `0 <= index < count`.
    public init(index: Int, count: Int) throws {
        guard count >= 1, index >= 0, index < count else {
            throw SluiceError(.usage, "shard \(index)/\(count): expected K/N with N at least 1 and K from 0 to N-1")
        }
        self.index = index
        self.count = count
    }

    /// Parses `K/N`, for example `0/4` … `3/4`.
    /// - Throws: ``SluiceError/Code/usage`` for anything else.
    public init(parsing text: String) throws {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2,
            let index = Int(parts[0].trimmingCharacters(in: .whitespaces)),
            let count = Int(parts[1].trimmingCharacters(in: .whitespaces))
        else {
            throw SluiceError(.usage, "--shard expects K/N (for example 0/4), got '\(text)'")
        }
        try self.init(index: index, count: count)
    }

    /// Whether this shard owns the document with this key.
    public func owns(_ key: String) -> Bool {
        count == 1 || Int(xxh3_64(key, seed: Self.seed) % UInt64(count)) == index
    }

    /// `K/N`, the form stored in the checkpoint.
    public var description: String { "\(index)/\(count)" }
}
