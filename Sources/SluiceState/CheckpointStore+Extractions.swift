import Foundation
import SluiceCore
import SluiceLMDB

/// The extraction cache: the text of expensive extractions (PDF, OCR) kept across runs, keyed by the
/// document's content hash and the extractor's identity, so that a copy of an indexed file under a new
/// key, a re-embedding or a crashed run's redo does not parse or OCR the same bytes again.
///
/// Entries are collected (``collectExtractions(live:capBytes:)``) when no document record references
/// their content hash any more or their extractor identity is no longer in use, and none is added once
/// the cache holds `capBytes`.
extension CheckpointStore {
    /// How many entries the cache holds and the bytes of the pages they occupy.
    package struct ExtractionCacheUsage: Sendable, Hashable {
        package var entries: Int
        package var bytes: Int
    }

    /// Content hash (16 bytes, so that one hash's entries are adjacent) then the identity's XXH3-64.
    static func extractionKey(content: ContentHash, identity: ExtractorIdentity) -> [UInt8] {
        let tag = xxh3_64(identity.description)
        var key = content.bytes
        key.reserveCapacity(24)
        for shift in stride(from: 56, through: 0, by: -8) {
            key.append(UInt8(truncatingIfNeeded: tag >> UInt64(shift)))
        }
        return key
    }

    /// The cached extraction of these bytes by this extractor, or nil (also for an entry that does not
    /// decode: a damaged entry is a miss, and the next successful extraction overwrites it).
    package func cachedExtraction(content: ContentHash, identity: ExtractorIdentity) throws -> ExtractedText? {
        guard let extractions else { return nil }
        return try environment.read { txn in
            try txn.get(extractions, Self.extractionKey(content: content, identity: identity)).flatMap(
                ExtractedTextCoding.decode
            )
        }
    }

    /// Keeps an extraction, unless the cache already holds `capBytes` or more.
    /// - Returns: whether it was stored.
    @discardableResult
    package func cacheExtraction(
        _ text: ExtractedText,
        content: ContentHash,
        identity: ExtractorIdentity,
        capBytes: Int
    ) throws -> Bool {
        guard let extractions, capBytes > 0 else { return false }
        let value = ExtractedTextCoding.encode(text)
        return try environment.write { txn in
            guard try txn.size(extractions) + value.count <= capBytes else { return false }
            try txn.put(extractions, Self.extractionKey(content: content, identity: identity), value)
            return true
        }
    }

    package func extractionCacheUsage() throws -> ExtractionCacheUsage {
        guard let extractions else { return ExtractionCacheUsage(entries: 0, bytes: 0) }
        return try environment.read { txn in
            ExtractionCacheUsage(entries: try txn.count(extractions), bytes: try txn.size(extractions))
        }
    }

    /// Removes the entries whose content hash no document record references (documents changed, pruned,
    /// or whose new version failed) or whose extractor identity is not among `live` (settings or code
    /// changed since), or every entry when `capBytes` is 0 (the cache is off).
    /// - Returns: how many entries were removed.
    /// - Parameters:
    ///   - generations: the other index generations whose documents' entries are kept too (a candidate
    ///     being built still needs the active generation's, and the other way round).
    ///   - unreferenced: identities among `live` whose entries are kept though no document's content hash is
    ///     theirs: the captions of pictures inside documents, keyed by the picture's bytes (a picture recurs
    ///     in other documents and in a document's next version), bounded by `capBytes` like every entry.
    @discardableResult
    package func collectExtractions(
        live: Set<ExtractorIdentity>,
        capBytes: Int,
        generations: [String] = [],
        unreferenced keptUnreferenced: Set<ExtractorIdentity> = []
    ) throws -> Int {
        guard let extractions, try extractionCacheUsage().entries > 0 else { return 0 }
        if capBytes <= 0 {
            return try environment.write { txn in
                let count = try txn.count(extractions)
                try txn.drop(extractions)
                return count
            }
        }
        var referenced = try contentHashes(ofGenerations: generations)
        try forEachDocument { record in
            if let hash = record.contentHash { referenced.insert(hash) }
        }
        let tags = Set(live.map { xxh3_64($0.description) })
        let byContent = Set(keptUnreferenced.intersection(live).map { xxh3_64($0.description) })
        return try environment.write { txn in
            var unreferenced: [[UInt8]] = []
            try txn.forEach(extractions) { key, _ in
                let keep =
                    key.count == 24 && tags.contains(Self.identityTag(of: key))
                    && (referenced.contains(Self.contentHash(prefixOf: key))
                        || byContent.contains(Self.identityTag(of: key)))
                if !keep { unreferenced.append(Array(key)) }
                return true
            }
            for key in unreferenced { try txn.delete(extractions, key) }
            return unreferenced.count
        }
    }

    private static func identityTag(of key: UnsafeRawBufferPointer) -> UInt64 {
        (16..<24).reduce(0) { $0 << 8 | UInt64(key[$1]) }
    }

    private static func contentHash(prefixOf key: UnsafeRawBufferPointer) -> ContentHash {
        var high: UInt64 = 0
        var low: UInt64 = 0
        for index in 0..<8 { high = high << 8 | UInt64(key[index]) }
        for index in 8..<16 { low = low << 8 | UInt64(key[index]) }
        return ContentHash(high: high, low: low)
    }
}
