import SluiceCore
import SluiceLMDB
import Synchronization

/// What access control's field holds for each graph label's record, kept in memory, so that a search restricted by
/// access control reads in the order of the graph's bounds only the records its caller may read
/// (`LocalSink+FilteredSearch.swift`).
///
/// A filtered search reads records in the order of their bounds until its k-th best match is above every bound
/// left. Restricted by access control that way without this table, it would read the unreadable records near the
/// query too, and its time would grow with their number: something of records the caller may not see
/// (docs/ACCESS.md). With it, the bounds' pass computes every label's bound as before (the same work for every
/// caller) and lets only the labels whose value the caller's restriction accepts into its order, so the records
/// read, and the time, depend on what the caller may read, the store's size and the writes since the table's
/// generation (whose labels every search reads, whatever their readers).
///
/// The table describes the store at one generation: per label, an index into the distinct values of the field
/// (interned: a store's readers lists are few), or 0 for a label that holds no record then. A search at a later
/// generation reads the labels the change log names since it, so the table need not follow every write; once more
/// than ``refreshAfter`` labels changed a search brings it up to date (a copy, the changed labels' records read),
/// and where the log cannot say (a gap: a rebuild, a clear, a trimmed entry) it is built again from every record —
/// as the first restricted search of a process builds it: a pass over the store like a scan, once.
final class LocalAccessLabels: Sendable {
    /// The field's values for one store generation.
    struct Table: Sendable {
        let field: String
        /// The store generation whose records the table describes.
        fileprivate(set) var generation: UInt64
        /// Per label, the index in ``values`` of its record's value of ``field``; 0 for a label that holds no
        /// record, or whose record does not read (neither is ever readable).
        fileprivate(set) var valueOfLabel: [UInt32] = []
        /// The distinct values (``LocalAccessValues``), numbered as ``valueOfLabel`` names them.
        fileprivate(set) var values = LocalAccessValues()

        /// For each of ``values``, 1 when a record with it meets every one of `conditions` (each naming ``field``
        /// alone), else 0; "no record" is never met.
        func allowed(by conditions: [SearchFilter]) -> [UInt8] { values.allowed(by: conditions, field: field) }

        fileprivate mutating func set(_ label: UInt64, to value: MetadataValue??) {
            let index = value.map { values.number(of: $0) } ?? 0
            let position = Int(label)
            if position >= valueOfLabel.count {
                guard index != 0 else { return }
                valueOfLabel.append(contentsOf: repeatElement(0, count: position + 1 - valueOfLabel.count))
            }
            valueOfLabel[position] = index
        }
    }

    /// A restricted search's labels: the table's value per label and which values the caller may read, in the
    /// shape `sluice_hnsw_bounds` takes them.
    struct Mask: Sendable {
        let valueOfLabel: [UInt32]
        let allowed: [UInt8]

        /// The labels of `table` that `conditions` (each naming the table's field alone) allow.
        init(_ table: Table, _ conditions: [SearchFilter]) {
            // Never empty: an empty array's address may be nil, which `sluice_hnsw_bounds` reads as no mask.
            valueOfLabel = table.valueOfLabel.isEmpty ? [0] : table.valueOfLabel
            allowed = table.allowed(by: conditions)
        }
    }

    /// Labels changed since the table's generation past which a search brings the table up to date (every
    /// search reads those labels' records whatever their readers; a refresh copies the table, 4 bytes a label).
    static let refreshAfter = 64

    /// The largest label the table holds: labels come from the store's counter, far below it; a store whose
    /// labels pass it is searched by a scan.
    static let labelLimit: UInt64 = 1 << 31

    private let current = Mutex<Table?>(nil)

    /// The table for a search whose read transaction `txn` is at store `generation`: the one kept when it
    /// describes a generation not after `generation` that the change log reaches (`changed` gives the labels the
    /// log names after a generation up to `generation`, nil where it cannot say), brought up to date first when
    /// more than ``refreshAfter`` labels changed since, or built from every record. Nil when the store cannot be
    /// described (a label past ``labelLimit``) or the kept table describes a later generation than the
    /// transaction's (a search that began before another brought it up to date): the search scans then.
    func table(
        field: String,
        at generation: UInt64,
        environment: LMDBEnvironment,
        txn: LMDBTransaction,
        changed: (UInt64) throws -> Set<UInt64>?
    ) throws -> Table? {
        if let kept = current.withLock({ $0 }), kept.field == field {
            guard kept.generation <= generation else { return nil }
            if let labels = try changed(kept.generation) {
                guard labels.count > Self.refreshAfter else { return kept }
                var table = kept
                table.generation = generation
                for label in labels {
                    guard label < Self.labelLimit else { return nil }
                    table.set(label, to: try Self.value(of: label, field: field, environment: environment, txn: txn))
                }
                keep(table)
                return table
            }
        }
        guard let table = try Self.build(field: field, at: generation, environment: environment, txn: txn) else {
            return nil
        }
        keep(table)
        return table
    }

    /// Keeps `table` unless one of a later generation is kept already.
    private func keep(_ table: Table) {
        current.withLock { kept in
            if let existing = kept, existing.field == table.field, existing.generation >= table.generation { return }
            kept = table
        }
    }

    /// The table of every labelled record as `txn` sees it: one pass over the records in key order (each
    /// record's label from `ann-labels`, its value of `field` read without decoding the rest).
    private static func build(
        field: String,
        at generation: UInt64,
        environment: LMDBEnvironment,
        txn: LMDBTransaction
    )
        throws -> Table?
    {
        let vectors = try environment.database("vectors")
        let labels = try environment.database("ann-labels")
        var table = Table(field: field, generation: generation)
        var fits = true
        try txn.forEach(vectors, largeValues: .copied) { key, bytes in
            let id = Array(key)
            guard let label = try txn.get(labels, id).map(LocalSink.number) else { return true }
            guard label < labelLimit else {
                fits = false
                return false
            }
            table.set(label, to: LocalAccessValues.value(in: bytes, field: field, id: id))
            return true
        }
        return fits ? table : nil
    }

    /// The value of `field` of the record `label` holds as `txn` sees it; `.none` when it holds none.
    private static func value(
        of label: UInt64,
        field: String,
        environment: LMDBEnvironment,
        txn: LMDBTransaction
    )
        throws -> MetadataValue??
    {
        let ann = try environment.database("ann")
        let vectors = try environment.database("vectors")
        guard let id = try txn.get(ann, LocalSink.ANNKey.labelPrefix + LocalSink.bytes(label)),
            let bytes = try txn.get(vectors, id, largeValues: .copied)
        else { return .none }
        return bytes.withUnsafeBytes { LocalAccessValues.value(in: $0, field: field, id: id) }
    }
}
