import SluiceLMDB

/// The local store's change log: which graph labels each generation touched, so that a process holding
/// a graph of an older generation (`sluice serve`, `sluice search` while a run writes) can still use it.
///
/// - Every write transaction that keeps the labels (``LocalSink/recordUpsert(_:in:)``,
///   ``LocalSink/recordDelete(_:in:)``) writes `changed/<generation>` in the `ann` database, in the same
///   transaction as the vectors: the labels it gave to upserted ids and the labels it freed. A
///   transaction that does not keep them (a rebuild, which gives every id a new label, a clear, a write
///   with `exact` or while the graph could not follow) writes no entry, and a rebuild or a clear drops the
///   log with the rest of `ann`: a gap ends what the log can tell.
/// - A graph of generation `g` tells the truth about every label that no generation after `g` touched.
///   A search with it at generation `G` drops the graph's hits among the labels touched in `(g, G]` and
///   scores the records those labels hold at `G` exactly. Every hit is read from the search's own read
///   transaction, so a stale or deleted record is never returned, whatever the graph holds.
/// - Entries are trimmed when a graph is saved (``trim(keepingLabels:_:)``), keeping the newest ones for
///   readers still holding an older graph in memory.
///   A store below `exact_below`, where no graph is saved, is trimmed the same way at the end of a run.
struct LocalANNChangeLog {
    let environment: LMDBEnvironment

    static let prefix = Array("changed/".utf8)

    /// A reader whose graph is more than this many changed labels behind brings it up to date (each
    /// search scores the changed labels' records exactly: a few microseconds each).
    static let catchUpAfter = 2048

    /// Labels the log keeps after a save: readers catch up long before they fall this far behind.
    static let retainedLabels = 4 * catchUpAfter

    static func key(_ generation: UInt64) -> [UInt8] { prefix + LocalSink.bytes(generation) }

    /// Records the labels that `generation` touched (possibly none: the entry still says the generation
    /// kept the labels).
    func record(_ generation: UInt64, labels: [UInt64], _ txn: LMDBTransaction) throws {
        let ann = try environment.database("ann")
        var value: [UInt8] = []
        value.reserveCapacity(labels.count * 8)
        for label in labels { value += LocalSink.bytes(label) }
        try txn.put(ann, Self.key(generation), value)
    }

    /// The labels touched after `from` up to `through`, or nil when the log cannot say (an entry is
    /// missing: trimmed, or a generation that did not keep the labels).
    func labels(after from: UInt64, through: UInt64, _ txn: LMDBTransaction) throws -> Set<UInt64>? {
        guard from <= through else { return nil }
        guard from < through else { return [] }
        let ann = try environment.database("ann")
        var expected = from + 1
        var labels = Set<UInt64>()
        try txn.forEach(ann, from: Self.key(expected)) { key, value in
            guard key.count == Self.prefix.count + 8, key.starts(with: Self.prefix),
                Self.generation(key) == expected
            else { return false }
            for offset in stride(from: 0, to: value.count - value.count % 8, by: 8) {
                labels.insert(Self.label(value, at: offset))
            }
            expected += 1
            return expected <= through
        }
        return expected == through + 1 ? labels : nil
    }

    /// Whether the log holds every generation after `from` up to `through`.
    func covers(after from: UInt64, through: UInt64, _ txn: LMDBTransaction) throws -> Bool {
        try labels(after: from, through: through, txn) != nil
    }

    /// Removes the oldest entries, keeping the newest ones that together hold up to `keepingLabels` labels.
    /// Runs after a graph was saved: the saved graph covers every entry, and readers that hold an older
    /// graph in memory catch up long before they fall behind what is kept.
    func trim(keepingLabels: Int, _ txn: LMDBTransaction) throws {
        let ann = try environment.database("ann")
        var entries: [(key: [UInt8], labels: Int)] = []
        try txn.forEach(ann, from: Self.prefix) { key, value in
            guard key.starts(with: Self.prefix) else { return false }
            entries.append((Array(key), value.count / 8))
            return true
        }
        var kept = 0
        var index = entries.count
        while index > 0, kept + entries[index - 1].labels <= keepingLabels {
            kept += entries[index - 1].labels
            index -= 1
        }
        for entry in entries[..<index] { try txn.delete(ann, entry.key) }
    }

    private static func generation(_ key: UnsafeRawBufferPointer) -> UInt64 {
        key.dropFirst(prefix.count).reduce(0) { $0 << 8 | UInt64($1) }
    }

    private static func label(_ value: UnsafeRawBufferPointer, at offset: Int) -> UInt64 {
        value[offset..<offset + 8].reduce(0) { $0 << 8 | UInt64($1) }
    }
}
