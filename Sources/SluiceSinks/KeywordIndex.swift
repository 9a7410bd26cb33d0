import Foundation
import SluiceCore
import SluiceLMDB

/// The local store's keyword index, kept in the store's own LMDB environment and written in the same
/// write transactions as the vectors, so that a crash at any point leaves both as they were after the last
/// committed transaction (LMDB commits a transaction whole or not at all).
///
/// The postings of one write transaction are one *segment*, written in key order after the keys of every
/// older segment: a transaction appends a few pages instead of dirtying one leaf per posting (the layout
/// before version 3 kept a key per term and record, ~100 random inserts per record).
///
/// Layout:
/// - `keyword-postings`: key `[UInt64 segment, big endian][term]`, value the term's postings in that
///   segment (``KeywordPostings``: record number, term frequency and record length, numbers ascending; for
///   a record scored by its rows or records, `KeywordIndex+Units.swift`, each unit holding the term with its
///   frequency and length there).
///   Terms are ``KeywordTokenizer`` terms; a term over ``maxTermBytes`` is not indexed.
/// - `keyword-records`: `i<id>` → `[UInt64 number, big endian][UInt32 record length]`; `n<number>` → id
///   (live records only); `d<number>` → empty for a replaced or deleted record whose postings are still
///   in a segment (they are skipped when read, and dropped when their segment is rewritten). An upsert
///   gives its record a new number (numbers only rise), so a replaced record's old postings are dead.
/// - `meta` (the store's): `keyword-index` = the index's version (absent: not built, or another layout,
///   tokenizer version, set of fields a record contributes (`KeywordIndex+Fields.swift`), form of the
///   terms' bytes (composed, `KeywordIndex+Counts.swift`) or units scored (`KeywordIndex+Units.swift`)),
///   `keyword-corpus` = `[UInt64 records][UInt64 terms]` (exact: BM25's N and average
///   length), `keyword-segments` = the directory (``KeywordSegment``, in record-number order),
///   `keyword-next` = `[UInt64 next record number][UInt64 next segment]`, `keyword-epoch` = a random `UInt64`
///   written anew whenever the numbers start over (a build: ``LocalKeywordAccess``; absent in a store built before).
///
/// A batch's segment is built before its transaction (``PreparedBatch``, off the writer thread) and written in
/// the transaction that writes its records, so the index is never behind the records. Segments are merged as
/// they accumulate (``KeywordMergePolicy``) in transactions of their own, on the store's merge thread
/// (``KeywordMerger``, `KeywordIndex+Merging.swift`): a merge reads its inputs in a read transaction and
/// commits the merged segment in a short write transaction, so readers see the old segments until the merge
/// commits, and a kill -9 before that leaves them. A search reads one block per query term and segment, a
/// bounded number once the merges have caught up.
struct KeywordIndex {
    static let postingsDatabase = "keyword-postings"
    static let recordsDatabase = "keyword-records"
    static let versionKey = Array("keyword-index".utf8)
    static let corpusKey = Array("keyword-corpus".utf8)
    static let segmentsKey = Array("keyword-segments".utf8)
    static let nextKey = Array("keyword-next".utf8)
    static let version = Array(
        ("bm25 tokenizer=\(KeywordTokenizer.version) layout=segment-blocks fields=text,title-or-name,headings terms=nfc"
            + " units=rows,records").utf8
    )
    static let maxTermBytes = 200
    /// A rebuild cuts the store into segments of this many records (as if written by that many upserts).
    static let rebuildSegmentRecords = 512

    let environment: LMDBEnvironment
    var policy = KeywordMergePolicy()

    /// For searching: opens nothing (a read-only store may not have the index's databases yet).
    init(environment: LMDBEnvironment) {
        self.environment = environment
    }

    /// For a write transaction: opens (creating) the databases first. Opening a database inside a write
    /// transaction would wait for that same transaction (LMDB opens it in a transaction of its own).
    init(writingTo environment: LMDBEnvironment) throws {
        self.environment = environment
        for name in ["vectors", "meta", Self.postingsDatabase, Self.recordsDatabase] {
            _ = try environment.database(name)
        }
    }

    /// What a write transaction reads of the index first and writes back last.
    struct State {
        var corpus = BM25.Corpus(documents: 0, terms: 0)
        var segments: [KeywordSegment] = []
        var nextNumber: UInt64 = 1
        var nextSegment: UInt64 = 1
    }

    /// Whether the index is built and current (readable in a read-only transaction).
    func isBuilt(_ txn: LMDBTransaction) throws -> Bool {
        try txn.get(environment.database("meta"), Self.versionKey) == Self.version
    }

    /// Builds the index from every stored record unless it is current: a store made before the keyword
    /// index existed, or with an older layout or tokenizer, gets it in this one transaction. A record that does
    /// not decode is left out of it and noted in `unreadable` (the sink's ``LocalSink/readNotice``).
    func ensureBuilt(_ txn: LMDBTransaction, skipping unreadable: LocalUnreadableRecords) throws {
        guard try !isBuilt(txn) else { return }
        try txn.drop(environment.database(Self.postingsDatabase))
        try txn.drop(environment.database(Self.recordsDatabase))
        var state = State()
        var segment = SegmentBuilder()
        // Writing other databases while a cursor walks `vectors` is safe in an LMDB write transaction.
        try txn.forEach(environment.database("vectors")) { key, value in
            let id = Array(key)
            guard let record = try unreadable.record(id: id, value) else { return true }
            let number = state.nextNumber
            state.nextNumber += 1
            let length = segment.add(number: number, record: record)
            try add(id: id, number: number, length: length, &state, txn)
            if segment.records == Self.rebuildSegmentRecords { try flush(&segment, &state, txn) }
            return true
        }
        try flush(&segment, &state, txn)
        try newEpoch(txn)  // the numbers started over (a cleared store's meta is dropped: it is rebuilt first)
        try save(state, txn)
        try txn.put(environment.database("meta"), Self.versionKey, Self.version)
    }

    /// Indexes a batch (built before the transaction, off the writer thread), replacing what its ids had.
    /// Merges are left to the merge thread.
    /// - Returns: the directory as this transaction leaves it (the writer waits for the merges when they
    ///   fall behind, ``KeywordMergePolicy/isBehind(_:)``).
    @discardableResult
    func upsert(_ batch: PreparedBatch, _ txn: LMDBTransaction) throws -> [KeywordSegment] {
        var state = try load(txn)
        let base = state.nextNumber - 1
        for (offset, record) in batch.records.enumerated() {
            try kill(id: record.id, &state, txn, forget: false)
            try add(id: record.id, number: base + UInt64(offset) + 1, length: record.length, &state, txn)
        }
        state.nextNumber = base + UInt64(batch.records.count) + 1
        if !batch.entries.isEmpty {
            try append(
                batch.entries,
                rebasedBy: base,
                first: base + 1,
                last: base + UInt64(batch.records.count),
                records: batch.records.count,
                &state,
                txn
            )
        }
        try save(state, txn)
        return state.segments
    }

    /// Removes the records of `ids` that are indexed (their postings are dropped when a merge rewrites
    /// their segment).
    func remove(_ ids: [[UInt8]], _ txn: LMDBTransaction) throws {
        var state = try load(txn)
        for id in ids { try kill(id: id, &state, txn, forget: true) }
        try save(state, txn)
    }

    // MARK: - Records

    /// Records `id` as live under `number`, with its length in terms.
    private func add(id: [UInt8], number: UInt64, length: Int, _ state: inout State, _ txn: LMDBTransaction) throws {
        let records = try environment.database(Self.recordsDatabase)
        var value = Self.bigEndian(number)
        withUnsafeBytes(of: UInt32(clamping: length).littleEndian) { value += $0 }
        try txn.put(records, [UInt8(ascii: "i")] + id, value)
        try txn.put(records, Self.numberKey(number), id)
        state.corpus.documents += 1
        state.corpus.terms += length
    }

    /// Marks the record of `id`, if indexed, dead: its number leaves the live table and its postings are
    /// skipped until its segment is rewritten. `forget` also removes the id (a delete; an upsert overwrites it).
    private func kill(id: [UInt8], _ state: inout State, _ txn: LMDBTransaction, forget: Bool) throws {
        let records = try environment.database(Self.recordsDatabase)
        let idKey = [UInt8(ascii: "i")] + id
        guard let value = try txn.get(records, idKey), value.count == 12 else { return }
        let number = Self.bigEndianInteger(value[0..<8])
        let length = value.withUnsafeBytes {
            Int(UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: 8, as: UInt32.self)))
        }
        if forget { try txn.delete(records, idKey) }
        try txn.delete(records, Self.numberKey(number))
        if let index = state.segments.firstIndex(where: { $0.holds(number) }) {
            try txn.put(records, Self.deadKey(number), [])
            state.segments[index].dead += 1
        }
        state.corpus.documents = max(0, state.corpus.documents - 1)
        state.corpus.terms = max(0, state.corpus.terms - length)
    }

    // MARK: - State

    func load(_ txn: LMDBTransaction) throws -> State {
        let meta = try environment.database("meta")
        var state = State()
        state.corpus = try corpus(txn)
        state.segments = try txn.get(meta, Self.segmentsKey).map(KeywordSegment.decode) ?? []
        if let next = try txn.get(meta, Self.nextKey), next.count == 16 {
            state.nextNumber = Self.integer(next, at: 0)
            state.nextSegment = Self.integer(next, at: 8)
        }
        return state
    }

    func save(_ state: State, _ txn: LMDBTransaction) throws {
        let meta = try environment.database("meta")
        try txn.put(meta, Self.corpusKey, Self.encode(state.corpus))
        try txn.put(meta, Self.segmentsKey, KeywordSegment.encode(state.segments))
        var next: [UInt8] = []
        for value in [state.nextNumber, state.nextSegment] { withUnsafeBytes(of: value.littleEndian) { next += $0 } }
        try txn.put(meta, Self.nextKey, next)
    }

    /// Names a new numbering of the records (``LocalKeywordAccess``: tables of another one are not used).
    private func newEpoch(_ txn: LMDBTransaction) throws {
        try txn.put(
            environment.database("meta"),
            LocalKeywordAccess.epochKey,
            withUnsafeBytes(of: UInt64.random(in: 1...UInt64.max).littleEndian) { Array($0) }
        )
    }

    func corpus(_ txn: LMDBTransaction) throws -> BM25.Corpus {
        guard let bytes = try txn.get(environment.database("meta"), Self.corpusKey), bytes.count == 16 else {
            return BM25.Corpus(documents: 0, terms: 0)
        }
        return BM25.Corpus(documents: Int(Self.integer(bytes, at: 0)), terms: Int(Self.integer(bytes, at: 8)))
    }

    // MARK: - Encoding

    static func numberKey(_ number: UInt64) -> [UInt8] { [UInt8(ascii: "n")] + bigEndian(number) }
    static func deadKey(_ number: UInt64) -> [UInt8] { [UInt8(ascii: "d")] + bigEndian(number) }

    static func bigEndian(_ value: UInt64) -> [UInt8] { withUnsafeBytes(of: value.bigEndian) { Array($0) } }

    static func bigEndianInteger<Bytes: Collection>(_ bytes: Bytes) -> UInt64 where Bytes.Element == UInt8 {
        bytes.reduce(0) { $0 << 8 | UInt64($1) }
    }

    static func encode(_ corpus: BM25.Corpus) -> [UInt8] {
        var out: [UInt8] = []
        for value in [UInt64(corpus.documents), UInt64(corpus.terms)] {
            withUnsafeBytes(of: value.littleEndian) { out += $0 }
        }
        return out
    }

    static func integer(_ bytes: [UInt8], at offset: Int) -> UInt64 {
        bytes.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) }
    }
}
