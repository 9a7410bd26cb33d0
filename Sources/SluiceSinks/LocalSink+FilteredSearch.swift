import SluiceCore
import SluiceLMDB
import Synchronization

/// A filtered vector search on the local store, exact and without a scan of every record.
///
/// hnswlib cannot filter while it searches, and a graph search filtered afterwards would return fewer than k or
/// miss matching records. So a filtered search is exact: the best k by cosine among the records that match. The
/// scan that answered it read every record of the store (about 100 ms at 100,000 chunks, 0.9 s at a million),
/// and every search `serve` runs with access control on is filtered. Here the graph's 8-bit vectors, in memory,
/// give each label an upper bound on its cosine (`sluice_hnsw_bounds`: the rounding of a code is bounded by its
/// scale), and records are read in the order of their bounds: a record is scored from its stored vector as the scan
/// scores it and the filter is checked on it, until the k-th best match's score is above every bound left. The
/// answer is the scan's — the same records in the same order, ties by id (``exactSearch(environment:_:k:filter:cancellation:skipping:)``
/// keeps the first in key order) — and what is read is the records that could enter the top k, not the store.
///
/// A search restricted by access control (a filter whose top-level conditions name access control's field alone)
/// reads only records its caller may read: read in the bounds' order as they are, the records near the query that
/// the caller may not see would be read too, and the search's time would grow with their number — something of
/// records a reader may not see. ``LocalAccessLabels`` keeps each label's readers in memory, and the bounds' pass
/// orders only the labels the caller may read (computing every label's bound all the same). A filter that names the
/// field otherwise (inside an `or`) scans, as the scan reads every record whatever the caller sees.
///
/// It answers only when the graph matches the read transaction's snapshot: the graph in memory (`nodes: memory`;
/// a graph with its nodes in a file holds codes whose error has no bound), the labels changed since the graph's
/// generation read from the change log and scored exactly, and no write to the graph between the moment it was
/// taken (before the transaction began) and the end of the bounds' computation. Otherwise, and below
/// `exact_below`, it scans, as before.
extension LocalSink {
    func filteredSearch(
        _ query: [Float],
        k: Int,
        filter: SearchFilter,
        cancellation: CancellationFlag?,
        skipping unreadable: LocalUnreadableRecords
    ) throws -> [SearchHit] {
        // A search restricted by access control reads only what its caller may read (``LocalAccessLabels``); one
        // whose filter names the field in a way no table can answer scans.
        let readers = AccessRestriction(filter, field: indexSettings.accessField)
        if readers != .inseparable, indexSettings.kind == .hnsw, let ann = try environment.existingDatabase("ann") {
            let attempt = {
                try self.boundedSearch(
                    query,
                    k: k,
                    filter: filter,
                    readers: readers,
                    ann: ann,
                    cancellation: cancellation,
                    skipping: unreadable
                )
            }
            var outcome = try attempt()
            // No graph in memory yet (a process whose searches were all filtered, such as a server with access
            // control), or one the change log cannot bring to this snapshot: the newest saved graph is loaded, as
            // an unfiltered search loads it, and the bounds tried once more.
            if case .graphUnavailable = outcome {
                let vectors = try environment.database("vectors")
                let (generation, count) = try environment.read { txn in
                    (try txn.get(ann, ANNKey.generation).map(Self.number) ?? 0, try txn.count(vectors))
                }
                if count >= indexSettings.exactBelow, loadNewerSavedIndex(generation: generation, count: count) {
                    outcome = try attempt()
                }
            }
            if case .answered(let hits) = outcome { return hits }
        }
        filteredSearchCounts.withLock { $0.scanned += 1 }
        return try LocalSink.exactSearch(
            environment: environment,
            query,
            k: k,
            filter: filter,
            cancellation: cancellation,
            skipping: unreadable
        )
    }

    /// How ``boundedSearch(_:k:filter:ann:cancellation:skipping:)`` ended.
    private enum BoundedOutcome {
        /// The best k matching records, the scan's answer.
        case answered([SearchHit])
        /// No graph in memory, or one the change log cannot bring to the read transaction's snapshot.
        case graphUnavailable
        /// A write to the graph overlapped, or the reads passed (or were on course to pass) the budget.
        case scan
    }

    /// The best `k` matching records read in the order of the graph's bounds, when the graph can answer for this
    /// snapshot (see above).
    private func boundedSearch(
        _ query: [Float],
        k: Int,
        filter: SearchFilter,
        readers: AccessRestriction,
        ann: LMDBDatabase,
        cancellation: CancellationFlag?,
        skipping unreadable: LocalUnreadableRecords
    ) throws -> BoundedOutcome {
        guard let live = annState.live, let index = live.index else { return .graphUnavailable }
        guard index.nodes == .memory else { return .scan }
        // Taken before the transaction begins: a write that ends after this is seen by the count below.
        let writes = index.mutationCount
        guard writes % 2 == 0 else { return .scan }
        let queryNorm = Self.norm(query)
        guard queryNorm > 0, k > 0 else { return .answered([]) }
        let vectors = try environment.database("vectors")
        let log = LocalANNChangeLog(environment: environment)
        return try environment.read { txn -> BoundedOutcome in
            let generation = try txn.get(ann, ANNKey.generation).map(Self.number) ?? 0
            let count = try txn.count(vectors)
            guard count >= indexSettings.exactBelow else { return .scan }
            // The labels read whatever their bounds: those changed since the graph's generation and, restricted by
            // access control, since the access table's.
            var since = live.generation
            var mask: LocalAccessLabels.Mask?
            if case .conditions(let conditions) = readers, let field = indexSettings.accessField {
                guard
                    let table = try accessLabels.table(
                        field: field,
                        at: generation,
                        environment: environment,
                        txn: txn,
                        changed: { try log.labels(after: $0, through: generation, txn) }
                    )
                else { return .scan }
                mask = LocalAccessLabels.Mask(table, conditions)
                // A graph newer than the transaction is for the change log to refuse, as without a restriction.
                if live.generation <= generation { since = min(since, table.generation) }
            }
            guard
                let changed = try changedLabels.labels(
                    graphGeneration: since,
                    storeGeneration: generation,
                    read: { try log.labels(after: since, through: generation, txn) }
                )
            else { return .graphUnavailable }
            var best = BoundedBest(k: k)
            var read = 0
            // Past this many records read in the bounds' order (point reads, many times a scan's cost a record),
            // a scan is cheaper: a filter that matches little, or nothing near the query.
            let budget = Self.boundedReadBudget(records: count)
            // A label's record as this transaction sees it, scored from its stored vector, kept if it can enter
            // the top k and matches.
            func consider(_ label: UInt64) throws {
                read += 1
                if read % LocalSink.cancellationInterval == 0 { try cancellation?.check() }
                guard let id = try txn.get(ann, ANNKey.labelPrefix + Self.bytes(label)),
                    let bytes = try txn.get(vectors, id, largeValues: .copied)
                else { return }
                let score = bytes.withUnsafeBytes { Self.cosine(query, queryNorm: queryNorm, encoded: $0) }
                guard best.admits(score: score, id: id),
                    let record = try unreadable.record(id: id, bytes), filter.matches(record)
                else { return }
                best.insert(SearchHit(score: score, record: record), id: id)
            }
            // The changed labels' graph entries are out of date: their records are read whatever their bounds.
            for label in changed { try consider(label) }
            var capacity = max(256, 16 * k)
            var done = 0
            while true {
                guard let (labels, bounds) = index.bounds(query, capacity: capacity, mask: mask),
                    index.mutationCount == writes
                else { return .scan }
                for position in done..<labels.count {
                    if best.isFull, bounds[position] < best.lowestScore {
                        return .answered(counted(best.hits, read: read))
                    }
                    let label = labels[position]
                    if changed.contains(label) { continue }
                    // Past the budget, or, while fewer than k matched, on course to pass it: the scan is cheaper.
                    if read >= budget || (!best.isFull && read >= 128 && best.hits.count * budget < k * read) {
                        return .scan
                    }
                    try consider(label)
                }
                // Fewer than asked for: every label of the graph was considered.
                if labels.count < capacity { return .answered(counted(best.hits, read: read)) }
                done = labels.count
                capacity *= 4
            }
        }
    }
}

extension LocalSink {
    /// The scan of every record a filtered search answered with before the graph's bounds (for benchmarks and
    /// checks: ``search(_:)`` gives the same answer).
    package func scanSearch(_ query: [Float], k: Int, filter: SearchFilter?) throws -> [SearchHit] {
        try LocalSink.exactSearch(environment: environment, query, k: k, filter: filter, skipping: unreadable)
    }

    /// How this store's filtered searches were answered so far: by the bounds (and the records they read), or by
    /// a scan.
    package var filteredSearchTally: (bounded: Int, scanned: Int, recordsRead: Int) {
        filteredSearchCounts.withLock { ($0.bounded, $0.scanned, $0.recordsRead) }
    }

    /// The most records a filtered search reads in the order of the graph's bounds before it scans instead: a
    /// twentieth of the store, at least 1,024. A point read (the label, then the record) cost about 13 µs against
    /// a scan's 0.9 µs a record (100,000 records of 1 KB of text, AMD EPYC Zen 5): near this many reads the scan
    /// is the cheaper answer. A search whose matches so far put it on course to pass the budget gives up early
    /// (after 128 reads), so a filter that matches little costs a fraction of a scan more, not the budget.
    static func boundedReadBudget(records: Int) -> Int { max(1024, records / 20) }

    /// `hits`, counted as a filtered search the bounds answered after reading `read` records.
    fileprivate func counted(_ hits: [SearchHit], read: Int) -> [SearchHit] {
        filteredSearchCounts.withLock {
            $0.bounded += 1
            $0.recordsRead += read
        }
        return hits
    }
}

/// How a store's filtered searches were answered: by the graph's bounds (and how many records they read), or by a
/// scan of every record.
struct FilteredSearchCounts {
    var bounded = 0
    var scanned = 0
    var recordsRead = 0
}

/// The best k hits as the exact scan keeps them: by score, highest first, and among equal scores the record with
/// the lower id first (the scan meets the ids in key order and lets a later equal score in only while there is
/// room).
private struct BoundedBest {
    let k: Int
    private(set) var hits: [SearchHit] = []
    private var ids: [[UInt8]] = []

    init(k: Int) { self.k = k }

    var isFull: Bool { hits.count >= k }
    var lowestScore: Float { hits.last?.score ?? -.infinity }

    /// Whether a record of this score and id would be among the best k.
    func admits(score: Float, id: [UInt8]) -> Bool {
        guard let last = hits.last, isFull else { return true }
        return Self.precedes(score, id, last.score, ids[ids.count - 1])
    }

    mutating func insert(_ hit: SearchHit, id: [UInt8]) {
        guard !ids.contains(id) else { return }
        let index = hits.indices.first { Self.precedes(hit.score, id, hits[$0].score, ids[$0]) } ?? hits.count
        hits.insert(hit, at: index)
        ids.insert(id, at: index)
        if hits.count > k {
            hits.removeLast()
            ids.removeLast()
        }
    }

    private static func precedes(_ score: Float, _ id: [UInt8], _ otherScore: Float, _ otherID: [UInt8]) -> Bool {
        score > otherScore || (score == otherScore && id.lexicographicallyPrecedes(otherID))
    }
}
