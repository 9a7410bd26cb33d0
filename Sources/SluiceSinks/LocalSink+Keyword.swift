import Foundation
import SluiceCore
import SluiceLMDB
import Synchronization

/// Keyword search over the local store: BM25 over ``KeywordIndex``, which upserts and deletes maintain in
/// their own write transactions.
extension LocalSink {
    public var searchModes: Set<SearchMode> { [.vector, .keyword] }

    /// The records keyword searches' ranked walks have read so far (for tests and benchmarks).
    package var keywordRecordsRead: Int { keywordReads.withLock { $0 } }

    /// The best `k` records by BM25 among those that match `filter`. The filter is evaluated while walking
    /// down the whole ranking, so k records come back whenever k matching records hold a query term.
    ///
    /// A store opened read-only that was made before the keyword index existed (the next `sluice run`
    /// builds it) is ranked by a scan that counts the query's terms in every record: same scores, slower.
    ///
    /// A search restricted by access control (`access`: the conditions of the filter that name access control's
    /// field alone, ``AccessRestriction/init(_:field:)``) ranks as if the store held only the records those
    /// conditions accept — the corpus and every term's document frequency are theirs — and its walk reads only
    /// those (``LocalKeywordAccess``); so a score, or the time a search takes, says nothing of the others.
    /// - Parameter counting: given the number of records the walk read (for tests and benchmarks).
    static func keywordSearch(
        environment: LMDBEnvironment,
        _ text: String,
        k: Int,
        filter: SearchFilter?,
        bm25: BM25 = BM25(),
        cancellation: CancellationFlag? = nil,
        skipping unreadable: LocalUnreadableRecords? = nil,
        access: LocalKeywordAccess.Restriction? = nil,
        counting: ((Int) -> Void)? = nil
    ) throws -> [SearchHit] {
        let terms = KeywordIndex.counts(of: text).terms.sorted()
        guard !terms.isEmpty, k > 0 else { return [] }
        let index = KeywordIndex(environment: environment)
        let vectors = try environment.database("vectors")
        // Opened outside the read transaction (missing in a read-only store made before the index).
        _ = try? environment.database(KeywordIndex.postingsDatabase)
        _ = try? environment.database(KeywordIndex.recordsDatabase)
        var considered = 0
        defer { counting?(considered) }
        return try environment.read { txn in
            var hits: [SearchHit] = []
            // Returns false once k hits are found.
            func consider(_ id: [UInt8], _ score: Double) throws -> Bool {
                considered += 1
                if considered % LocalSink.cancellationInterval == 0 { try cancellation?.check() }
                guard let value = try txn.get(vectors, id),
                    let record = try LocalSink.record(id: id, value, skipping: unreadable)
                else { return true }
                guard filter?.matches(record) ?? true else { return true }
                hits.append(SearchHit(score: Float(score), record: record))
                return hits.count < k
            }
            func scanned() throws -> [SearchHit] {
                let ranking = try scanRanking(
                    terms,
                    environment: environment,
                    txn,
                    bm25: bm25,
                    admitting: access.map { access in
                        { record in access.conditions.allSatisfy { $0.matches(record) } }
                    },
                    cancellation,
                    unreadable
                )
                for (id, score) in ranking {
                    guard try consider(Array(id.utf8), score) else { break }
                }
                return hits
            }
            guard try index.isBuilt(txn) else { return try scanned() }
            let snapshot = try index.snapshot(txn)
            var corpus = snapshot.corpus
            var admission: LocalKeywordAccess.Admission?
            if let access {
                // Numbers spanning too far for a table: the scan, which reads every record whoever asks.
                guard
                    let table = try access.tables.table(
                        field: access.field,
                        epoch: try index.epoch(txn),
                        snapshot: snapshot,
                        environment: environment,
                        txn: txn,
                        cancellation: cancellation
                    )
                else { return try scanned() }
                admission = LocalKeywordAccess.Admission(table, access.conditions)
                corpus = admission?.corpus ?? corpus
            }
            // Each record scores as its best unit (a row or record of a table or record chunk, or itself).
            let scores = BM25.best(
                bm25.scores(
                    try terms.map { term in
                        let read = try index.postings(of: term, in: snapshot, admitting: admission, txn)
                        return (
                            read.records,
                            read.list.map { (BM25.Unit(id: $0.id, unit: $0.unit), $0.frequency, $0.length) }
                        )
                    },
                    corpus: corpus
                )
            )
            // By descending score, ties by id: ids are looked up only for the scores walked.
            let ranked = scores.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }
            var start = 0
            while start < ranked.count {
                var end = start + 1
                while end < ranked.count && ranked[end].value == ranked[start].value { end += 1 }
                let tied = try ranked[start..<end].compactMap { entry in
                    try index.id(of: entry.key, txn).map { (id: String(decoding: $0, as: UTF8.self), bytes: $0) }
                }
                for entry in tied.sorted(by: { $0.id < $1.id }) {
                    guard try consider(entry.bytes, ranked[start].value) else { return hits }
                }
                start = end
            }
            return hits
        }
    }

    /// BM25 from postings counted by reading every record (no index yet and no right to write one), among the
    /// records `admitting` accepts (all without it).
    private static func scanRanking(
        _ terms: [String],
        environment: LMDBEnvironment,
        _ txn: LMDBTransaction,
        bm25: BM25,
        admitting: ((VectorRecord) -> Bool)?,
        _ cancellation: CancellationFlag?,
        _ unreadable: LocalUnreadableRecords?
    ) throws -> [(id: String, score: Double)] {
        var postings = [(records: Int, list: [(id: BM25.Unit<String>, frequency: Int, length: Int)])](
            repeating: (0, []),
            count: terms.count
        )
        var corpus = BM25.Corpus(documents: 0, terms: 0)
        var seen = 0
        try txn.forEach(environment.database("vectors")) { key, value in
            // Every record read counts toward the next look at the flag, admitted or not.
            seen += 1
            if seen % LocalSink.cancellationInterval == 0 { try cancellation?.check() }
            guard let record = try LocalSink.record(id: Array(key), value, skipping: unreadable),
                admitting?(record) ?? true
            else { return true }
            let counts = KeywordIndex.counts(of: record)
            corpus.documents += 1
            corpus.terms += counts.length
            for (index, term) in terms.enumerated() {
                let units = counts.postings(of: term)
                guard !units.isEmpty else { continue }
                postings[index].records += 1
                for unit in units {
                    postings[index].list.append(
                        (BM25.Unit(id: record.id.rawValue, unit: unit.unit), unit.frequency, unit.length)
                    )
                }
            }
            return true
        }
        return BM25.best(bm25.scores(postings, corpus: corpus)).map { (id: $0.key, score: $0.value) }
            .sorted { $0.score != $1.score ? $0.score > $1.score : $0.id < $1.id }
    }
}
