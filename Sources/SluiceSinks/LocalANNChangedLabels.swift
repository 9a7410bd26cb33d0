import Synchronization

/// What the change log said for the last pair of generations a search asked about: the labels changed
/// after the reader's graph generation up to the store generation its read transaction saw (or that the log
/// could not say). Searches at the same pair use it instead of reading the log from LMDB again.
///
/// The log's answer for a pair never changes, so nothing but a new pair replaces it: each generation's entry
/// is written in the write transaction that makes the generation, generations only count up (a clear or a
/// rebuild counts on), and an entry trimmed later was true when it was read (the labels that changed between
/// two generations stay the labels that changed). A search with a newer graph (caught up, loaded) or at a
/// newer store generation asks about a new pair and reads the log.
final class LocalANNChangedLabels: Sendable {
    private struct Entry {
        var graphGeneration: UInt64
        var storeGeneration: UInt64
        var labels: Set<UInt64>?
    }

    private let last = Mutex<Entry?>(nil)

    /// The labels changed after `graphGeneration` through `storeGeneration`: the answer kept for that pair,
    /// or `read`'s (the change log's), which is then kept.
    func labels(
        graphGeneration: UInt64,
        storeGeneration: UInt64,
        read: () throws -> Set<UInt64>?
    ) rethrows -> Set<UInt64>? {
        if let entry = last.withLock({ $0 }), entry.graphGeneration == graphGeneration,
            entry.storeGeneration == storeGeneration
        {
            return entry.labels
        }
        let labels = try read()
        last.withLock {
            $0 = Entry(graphGeneration: graphGeneration, storeGeneration: storeGeneration, labels: labels)
        }
        return labels
    }
}
