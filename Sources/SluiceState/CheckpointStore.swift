import Foundation
import SluiceCore
import SluiceLMDB

/// The run state of one pipeline, in LMDB: documents, the embedding cache, the extraction cache
/// (`CheckpointStore+Extractions.swift`), runs and metadata.
///
/// All methods are synchronous and may block (write transactions wait for the writer lock and fsync):
/// the pipeline calls them from a ``BlockingExecutor``.
package final class CheckpointStore: Sendable {
    let environment: LMDBEnvironment
    private let documents: LMDBDatabase
    private let cache: LMDBDatabase
    private let runs: LMDBDatabase
    private let meta: LMDBDatabase
    /// Nil only in a read-only state written before the extraction cache existed.
    let extractions: LMDBDatabase?
    /// The index generation whose document records and settings this store reads and writes (nil or
    /// `g0`: the first table, as before generations existed). See ``GenerationManifest``.
    package let generation: String?
    private static let decoder = JSONDecoder()

    /// Opens (creating) the state at `directory`.
    /// - Parameter generation: the generation whose document records to use (``GenerationManifest``): the
    ///   embedding and extraction caches and the runs are shared by every generation.
    /// - Throws: ``SluiceError/Code/stateCorrupt`` (with what happened and how to recover) when its file
    ///   is truncated or damaged: checked before LMDB maps it.
    package init(directory: URL, readOnly: Bool = false, generation: String? = nil) throws {
        if readOnly && !Self.exists(at: directory) {
            throw SluiceError(.usage, "no state at \(directory.path): run the pipeline first")
        }
        environment = try Self.openEnvironment(directory, readOnly: readOnly)
        self.generation = generation == GenerationManifest.original ? nil : generation
        documents = try environment.database(Self.documentsTable(self.generation))
        cache = try environment.database("embeddings")
        runs = try environment.database("runs")
        meta = try environment.database("meta")
        extractions =
            readOnly ? try environment.existingDatabase("extractions") : try environment.database("extractions")
    }

    /// Whether `directory` holds a checkpoint (a run has opened it for writing). A state folder without one
    /// may hold a reader's generations manifest only (docs/OPERATIONS.md, "Serving from another machine").
    package static func exists(at directory: URL) -> Bool {
        FileManager.default.fileExists(atPath: directory.appendingPathComponent("data.mdb").path)
    }

    private static func openEnvironment(_ directory: URL, readOnly: Bool) throws -> LMDBEnvironment {
        try LMDBEnvironment(
            path: directory,
            mapSize: 256 << 30,
            // The five tables, and one of document records per other generation (at most three named).
            maxDatabases: 16,
            readOnly: readOnly,
            errors: .init(
                code: .state,
                owner: "the state at \(directory.path)",
                damaged: (.stateCorrupt, Self.damagedFileAdvice)
            )
        )
    }

    /// A setting that every generation's runs of the state at `directory` record alike (`shard`: the
    /// shard a state's runs are of), as the original generation's runs recorded it, else as another
    /// generation's did; nil when none did or there is no state. Read without the tables of document records:
    /// a state rebuilt after a promote holds only the promoted generation's (session 47's campaign: reading
    /// it through a read-only store, which needs the original table, failed `generation start`).
    package static func recordedSetting(_ key: String, directory: URL) throws -> String? {
        guard FileManager.default.fileExists(atPath: directory.appendingPathComponent("data.mdb").path) else {
            return nil
        }
        let environment = try openEnvironment(directory, readOnly: true)
        guard let meta = try environment.existingDatabase("meta") else { return nil }
        return try environment.read { txn in
            if let value = try txn.get(meta, Array(key.utf8)) { return String(decoding: value, as: UTF8.self) }
            var found: String?
            try txn.forEach(meta) { name, value in
                let text = String(decoding: name, as: UTF8.self)
                let parts = text.split(separator: "/", maxSplits: 1)
                if parts.count == 2, parts[1] == key, parts[0].hasPrefix("g") {
                    found = String(decoding: value, as: UTF8.self)
                    return false
                }
                return true
            }
            return found
        }
    }

    /// The same state seen as the store of `generation` (its document records and settings), on this
    /// store's LMDB environment: a process must not open one environment twice (closing either releases
    /// the locks of both), so a reader that follows generations, as `sluice serve` does, opens the state
    /// once and takes such views of it.
    package func viewing(generation: String?) throws -> CheckpointStore {
        let scope = generation == GenerationManifest.original ? nil : generation
        if scope == self.generation { return self }
        return try CheckpointStore(sharing: self, generation: scope)
    }

    /// Whether `generation` has a table of document records yet (a candidate has none before its first
    /// run; a read-only store cannot be viewed as it until then).
    package func hasRecords(ofGeneration generation: String?) throws -> Bool {
        let scope = generation == GenerationManifest.original ? nil : generation
        return try environment.existingDatabase(Self.documentsTable(scope)) != nil
    }

    private init(sharing other: CheckpointStore, generation: String?) throws {
        environment = other.environment
        self.generation = generation
        documents = try environment.database(Self.documentsTable(generation))
        cache = other.cache
        runs = other.runs
        meta = other.meta
        extractions = other.extractions
    }

    /// The table of a generation's document records.
    static func documentsTable(_ generation: String?) -> String {
        generation.map { "documents.\($0)" } ?? "documents"
    }

    /// The metadata key of a generation's setting (`embedder`, `shaping`, …): each generation has its own.
    private func scoped(_ key: String) -> [UInt8] {
        Array((generation.map { "\($0)/" } ?? "").utf8) + Array(key.utf8)
    }

    /// What to do about a state file LMDB cannot use.
    static let damagedFileAdvice = """
        Nothing was changed. Restore the state folder from a backup, or move it aside and start a new state: \
        the next run loads every document again (vector ids are deterministic: the store's vectors are \
        overwritten, not duplicated), and `sluice verify --repair` then deletes the vectors of documents the \
        new state does not know
        """

    /// What to do about document records that cannot be read.
    static let damagedRecordAdvice = """
        Nothing was changed. `sluice verify --repair` forgets the records it cannot read and processes \
        their documents again; or move the state folder aside and start a new state (every document is \
        loaded again)
        """

    /// What to do about run records that cannot be read.
    static let damagedRunAdvice = """
        Nothing was changed. `sluice verify --repair` forgets the run records it cannot read (the run history \
        only: documents and vectors are kept); or move the state folder aside and start a new state (every \
        document is loaded again)
        """

    /// The error for a document record that does not decode.
    private func damagedRecord(_ key: String, _ error: any Error) -> SluiceError {
        damaged("the record of document '\(key)'", error, advice: Self.damagedRecordAdvice)
    }

    /// The error for a run record that does not decode.
    private func damagedRun(_ runID: String, _ error: any Error) -> SluiceError {
        damaged("the record of run '\(runID)'", error, advice: Self.damagedRunAdvice)
    }

    private func damaged(_ what: String, _ error: any Error, advice: String) -> SluiceError {
        let reason = (error as? DecodingError).map(Self.reason) ?? "\(error)"
        return SluiceError(
            .stateCorrupt,
            "the state at \(environment.path.path) is damaged: \(what) cannot be read (\(reason)). \(advice)",
            cause: error
        )
    }

    private static func reason(_ error: DecodingError) -> String {
        switch error {
        case .dataCorrupted(let context), .keyNotFound(_, let context), .typeMismatch(_, let context),
            .valueNotFound(_, let context):
            let path = context.codingPath.map(\.stringValue).joined(separator: ".")
            return path.isEmpty ? context.debugDescription : "\(path): \(context.debugDescription)"
        @unknown default:
            return "not a document record"
        }
    }

    // MARK: Documents

    /// LMDB keys are at most 511 bytes: long document keys are shortened with their hash appended (the full
    /// key is in the record).
    static func storageKey(_ key: String) -> [UInt8] {
        let bytes = Array(key.utf8)
        if bytes.count <= 400 { return bytes }
        return Array(bytes.prefix(360)) + Array("#\(ContentHash(utf8: key).hex)".utf8)
    }

    package func document(_ key: String) throws -> DocumentRecord? {
        try environment.read { txn in try decodeDocument(txn.get(documents, Self.storageKey(key)), key: key) }
    }

    /// Looks up many documents in one read transaction.
    package func documents(_ keys: [String]) throws -> [String: DocumentRecord] {
        try environment.read { txn in
            var out: [String: DocumentRecord] = [:]
            for key in keys {
                if let record = try decodeDocument(txn.get(documents, Self.storageKey(key)), key: key) {
                    out[key] = record
                }
            }
            return out
        }
    }

    /// Visits every document record in key order.
    package func forEachDocument(_ body: (DocumentRecord) throws -> Void) throws {
        try forEachDocument(in: documents, body)
    }

    /// Visits the records of a documents table in key order; one that does not decode is a damaged state.
    private func forEachDocument(in table: LMDBDatabase, _ body: (DocumentRecord) throws -> Void) throws {
        try environment.read { txn in
            try txn.forEach(table) { key, value in
                let record: DocumentRecord
                do {
                    record = try Self.decoder.decode(DocumentRecord.self, from: Data(value))
                } catch {
                    throw damagedRecord(String(decoding: key, as: UTF8.self), error)
                }
                try body(record)
                return true
            }
        }
    }

    package func documentCount() throws -> Int { try environment.read { try $0.count(documents) } }

    /// Writes and deletes document records in one transaction.
    package func commit(put records: [DocumentRecord], delete keys: [String] = []) throws {
        try write([.commit(put: records, delete: keys)])
    }

    /// Carries out `writes` in one transaction, in order, as if each had committed on its own one after the
    /// other (the run's group commit, `CheckpointWrite.swift`); nothing of them if it throws.
    package func write(_ writes: [CheckpointWrite]) throws {
        let encoder = JSONEncoder()
        try environment.write { txn in
            // Every key here is random (documents by path, cache entries by content hash): each operation can
            // fault a leaf with its neighbours, so the budget is checked from the first one on, whatever the
            // interval the environment's last transaction left (docs/BENCHMARKS.md, session 35).
            txn.expectFaults()
            for write in writes {
                switch write {
                case .commit(let records, let keys):
                    for record in records {
                        try txn.put(documents, Self.storageKey(record.key), Array(try encoder.encode(record)))
                    }
                    for key in keys { try txn.delete(documents, Self.storageKey(key)) }
                case .markPending(let pending):
                    try markPending(pending, txn, encoder)
                case .cacheEmbeddings(let vectors, let embedder):
                    for (hash, vector) in vectors {
                        let bytes = vector.withUnsafeBytes { Array($0) }
                        try txn.put(cache, Self.cacheKey(embedder: embedder, chunk: hash), bytes)
                    }
                }
            }
        }
    }

    /// Records, before the sink is written, the ids an attempt is about to upsert.
    /// Documents without a record get one with status ``DocumentRecord/Status/failed`` and the reason
    /// "interrupted before commit", which the commit replaces.
    package func markPending(_ pending: [(key: String, ids: [VectorID])]) throws {
        try write([.markPending(pending)])
    }

    private func markPending(
        _ pending: [(key: String, ids: [VectorID])],
        _ txn: LMDBTransaction,
        _ encoder: JSONEncoder
    ) throws {
        for (key, ids) in pending {
            var record =
                try decodeDocument(txn.get(documents, Self.storageKey(key)), key: key)
                ?? DocumentRecord(
                    key: key,
                    status: .failed,
                    contentHash: nil,
                    size: -1,
                    mtimeNanoseconds: 0,
                    error: .init(
                        code: SluiceError.Code.interrupted.rawValue,
                        message: "interrupted before its chunks were committed"
                    )
                )
            let merged = Set(record.pendingIDs).union(ids)
            record.pendingIDs = merged.sorted()
            try txn.put(documents, Self.storageKey(key), Array(try encoder.encode(record)))
        }
    }

    /// Records, before the sink is asked to delete them, that documents' vectors are about to go: each
    /// record becomes ``DocumentRecord/Status/failed`` ("interrupted while its vectors were being
    /// deleted"), with every id it had moved to `pendingIDs`. A crash between the deletion and the commit
    /// then leaves a record that claims nothing in the sink, is never skipped (a file restored to the
    /// indexed bytes is processed again) and still lists the ids for a later deletion. The commit that
    /// follows a completed deletion replaces the record.
    package func markRemoving(_ keys: [String]) throws {
        let encoder = JSONEncoder()
        try environment.write { txn in
            for key in keys {
                guard var record = try decodeDocument(txn.get(documents, Self.storageKey(key)), key: key) else {
                    continue
                }
                record.pendingIDs = record.knownIDs.sorted()
                record.chunkIDs = []
                record.status = .failed
                record.error = .init(
                    code: SluiceError.Code.interrupted.rawValue,
                    message: "interrupted while its vectors were being deleted from the sink"
                )
                try txn.put(documents, Self.storageKey(key), Array(try encoder.encode(record)))
            }
        }
    }

    private func decodeDocument(_ bytes: [UInt8]?, key: String) throws -> DocumentRecord? {
        guard let bytes else { return nil }
        do {
            return try Self.decoder.decode(DocumentRecord.self, from: Data(bytes))
        } catch {
            throw damagedRecord(key, error)
        }
    }

    /// Forgets the document records that cannot be decoded (`sluice verify --repair`): their documents
    /// are then new to the next run, and vectors of theirs that it does not write again are unknown to the
    /// checkpoint, which verify deletes.
    /// - Returns: the keys of the records removed.
    package func removeUndecodableDocuments() throws -> [String] {
        try environment.write { txn in
            var damaged: [[UInt8]] = []
            try txn.forEach(documents) { key, value in
                // `try?` is the question here: does the record decode?
                if (try? Self.decoder.decode(DocumentRecord.self, from: Data(value))) == nil {
                    damaged.append(Array(key))
                }
                return true
            }
            for key in damaged { try txn.delete(documents, key) }
            return damaged.map { String(decoding: $0, as: UTF8.self) }
        }
    }

    // MARK: Embedding cache

    static func cacheKey(embedder: EmbedderIdentity, chunk: ContentHash) -> [UInt8] {
        let tag = xxh3_64(embedder.description)
        var key = [UInt8]()
        key.reserveCapacity(24)
        for shift in stride(from: 56, through: 0, by: -8) {
            key.append(UInt8(truncatingIfNeeded: tag >> UInt64(shift)))
        }
        key += chunk.bytes
        return key
    }

    /// Cached vectors for the given chunk hashes (missing ones are absent from the result).
    package func cachedEmbeddings(_ hashes: [ContentHash], embedder: EmbedderIdentity) throws -> [ContentHash: [Float]]
    {
        try environment.read { txn in
            txn.expectFaults()  // random keys, each lookup a leaf (`write(_:)`)
            var out: [ContentHash: [Float]] = [:]
            for hash in hashes where out[hash] == nil {
                if let bytes = try txn.get(cache, Self.cacheKey(embedder: embedder, chunk: hash)) {
                    out[hash] = bytes.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
                }
            }
            return out
        }
    }

    /// Stores vectors in the cache (one transaction).
    package func cacheEmbeddings(_ vectors: [(ContentHash, [Float])], embedder: EmbedderIdentity) throws {
        try write([.cacheEmbeddings(vectors, embedder: embedder)])
    }

    package func cacheCount() throws -> Int { try environment.read { try $0.count(cache) } }

    // MARK: Runs and metadata

    package func saveRun(_ record: RunRecord) throws {
        let data = try JSONEncoder().encode(record)
        try environment.write { txn in try txn.put(runs, Array(record.runID.utf8), Array(data)) }
    }

    /// The most recent runs, newest first.
    ///
    /// A record that does not decode is damage, not an old format: every field added to ``RunRecord`` and
    /// its ``RunStats`` since the first checkpoint is optional (or decoded if present), so each record any
    /// version wrote reads back (RunRecordFormatTests keeps the first version's), and JSON's unknown keys
    /// are ignored, so a newer version's do too.
    /// - Throws: ``SluiceError/Code/stateCorrupt`` (with how to recover) for a run record that does not decode.
    package func recentRuns(limit: Int) throws -> [RunRecord] {
        var all: [RunRecord] = []
        try environment.read { txn in
            try txn.forEach(runs) { key, value in
                do {
                    all.append(try Self.decoder.decode(RunRecord.self, from: Data(value)))
                } catch {
                    throw damagedRun(String(decoding: key, as: UTF8.self), error)
                }
                return true
            }
        }
        return Array(all.sorted { $0.startedAt > $1.startedAt }.prefix(limit))
    }

    /// Forgets the run records that cannot be decoded (`sluice verify --repair`): the run history only.
    /// - Returns: the ids of the runs forgotten.
    package func removeUndecodableRuns() throws -> [String] {
        try environment.write { txn in
            var damaged: [[UInt8]] = []
            try txn.forEach(runs) { key, value in
                // `try?` is the question here: does the record decode?
                if (try? Self.decoder.decode(RunRecord.self, from: Data(value))) == nil { damaged.append(Array(key)) }
                return true
            }
            for key in damaged { try txn.delete(runs, key) }
            return damaged.map { String(decoding: $0, as: UTF8.self) }
        }
    }

    package func metadata(_ key: String) throws -> String? {
        try environment.read { txn in try txn.get(meta, scoped(key)).map { String(decoding: $0, as: UTF8.self) } }
    }

    package func setMetadata(_ key: String, _ value: String?) throws {
        try environment.write { txn in
            if let value {
                try txn.put(meta, scoped(key), Array(value.utf8))
            } else {
                try txn.delete(meta, scoped(key))
            }
        }
    }

    /// The metadata key of a sink clearing that was started and not yet seen to complete.
    static let pendingSinkResetKey = "pending-sink-reset"

    /// Forgets every document and, in the same transaction, notes that the sink is to be cleared
    /// (`kind` says how), before the sink is touched: a crash before ``finishSinkReset()`` leaves a state
    /// that claims nothing and a note that the next command completes. Keeps runs and the caches.
    package func beginSinkReset(_ kind: String) throws {
        try environment.write { txn in
            try txn.drop(documents)
            try txn.put(meta, scoped(Self.pendingSinkResetKey), Array(kind.utf8))
        }
    }

    /// The kind of a sink clearing that was started and not seen to complete, if any.
    package func pendingSinkReset() throws -> String? { try metadata(Self.pendingSinkResetKey) }

    /// Notes that the sink clearing begun by ``beginSinkReset(_:)`` completed.
    package func finishSinkReset() throws { try setMetadata(Self.pendingSinkResetKey, nil) }

    // MARK: Generations

    /// Forgets the document records and settings of `generation` (`sluice generation drop`), in one
    /// transaction (of the original generation, only its records: its settings' keys are the unscoped ones).
    package func dropGeneration(_ generation: String) throws {
        let scope = generation == GenerationManifest.original ? nil : generation
        let table = try environment.database(Self.documentsTable(scope))
        // An empty prefix would match every key: the original generation's settings stay.
        let prefix = scope.map { Array("\($0)/".utf8) } ?? Array("\u{0}\u{0}".utf8)
        try environment.write { txn in
            try txn.drop(table)
            var keys: [[UInt8]] = []
            try txn.forEach(meta, from: prefix) { key, _ in
                guard key.starts(with: prefix) else { return false }
                keys.append(Array(key))
                return true
            }
            for key in keys { try txn.delete(meta, key) }
        }
    }

    /// Visits the document records of another generation (`sluice generation promote` compares them), in key
    /// order; a record that does not decode is a damaged state (``SluiceError/Code/stateCorrupt``).
    /// A generation with no records yet (before its first run) has none to visit, in a read-only store too.
    package func forEachDocument(ofGeneration generation: String, _ body: (DocumentRecord) throws -> Void) throws {
        guard
            let table = try environment.existingDatabase(
                Self.documentsTable(generation == GenerationManifest.original ? nil : generation)
            )
        else { return }
        try forEachDocument(in: table, body)
    }

    /// The content hashes the document records of `generations` reference (besides this store's own):
    /// what the extraction cache keeps for a candidate that has not reached every document yet.
    package func contentHashes(ofGenerations generations: [String]) throws -> Set<ContentHash> {
        var hashes = Set<ContentHash>()
        for generation in Set(generations.map { $0 == GenerationManifest.original ? nil : $0 }) {
            let table = try environment.database(Self.documentsTable(generation))
            try environment.read { txn in
                try txn.forEach(table) { _, value in
                    if let record = try? Self.decoder.decode(DocumentRecord.self, from: Data(value)),
                        let hash = record.contentHash
                    {
                        hashes.insert(hash)
                    }
                    return true
                }
            }
        }
        return hashes
    }
}
