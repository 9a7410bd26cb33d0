import Foundation
import SluiceCore
import SluiceLMDB
import Synchronization

/// The embedded store: vectors, text and metadata in an LMDB environment of its own, searched by cosine
/// similarity through an HNSW graph kept beside the data (`LocalSink+ANN.swift`), inverted lists in LMDB
/// (`LocalSink+IVF.swift`), or by an exact scan.
/// No server to run.
///
/// Writes run on the sink's own thread (LMDB write transactions block and fsync), and the graph takes each
/// committed write in on a follower thread (`LocalANNFollower.swift`); the keyword index's segments are
/// built before the write and merged after it on a thread of their own (`KeywordMerger.swift`); the IVF index
/// is trained on a thread of its own while the writer writes (`LocalIVFTrainer.swift`); searches run on
/// reader threads of their own.
public final class LocalSink: VectorSink {
    let environment: LMDBEnvironment
    let executor: BlockingExecutor
    let readers: BlockingExecutor
    public let directory: URL
    let readOnly: Bool
    let indexSettings: IndexSettings
    /// The most pages (estimated) one write transaction of an upsert dirties (`LocalCommitPlan.swift`).
    let commitPages: Int
    let annState = LocalANNState()
    /// The IVF index's centroids in use (`LocalSink+IVF.swift`).
    let ivfState = LocalIVFState()
    /// Applies each committed write to the graph while the writer thread goes on (`LocalSink+ANN.swift`).
    let follower = LocalANNFollower()
    /// Builds the graph from a snapshot while the writer thread goes on (`LocalSink+ANNBuild.swift`).
    let builder = LocalANNBuilder()
    /// Merges the keyword index's segments after the writes (`LocalSink+KeywordMerges.swift`).
    let keywordMerger = KeywordMerger()
    /// The change log's labels for the last (graph, store) generations a search asked about.
    let changedLabels = LocalANNChangedLabels()
    /// Document key → ids, built when a new state first asks for a document's vectors (`LocalSink+Adoption.swift`).
    let documentKeys = DocumentKeyIndex()
    /// The records searches skipped because they do not decode (``readNotice``).
    let unreadable = LocalUnreadableRecords()
    /// Each label's readers, for searches restricted by access control (`LocalAccessLabels.swift`).
    let accessLabels = LocalAccessLabels()
    /// Each keyword record number's readers, for keyword searches restricted by access control
    /// (`LocalKeywordAccess.swift`).
    let keywordAccess = LocalKeywordAccess()
    /// The records keyword searches' ranked walks read (``keywordRecordsRead``).
    let keywordReads = Mutex(0)
    /// How filtered searches were answered (`LocalSink+FilteredSearch.swift`).
    let filteredSearchCounts = Mutex(FilteredSearchCounts())
    /// The upserts' commits waiting for the writer thread, written together (`LocalWrite.swift`).
    let commits: GroupCommit<LocalWrite>

    public var name: String { "local:\(directory.path)" }

    public var readNotice: String? { unreadable.notice }

    /// Files on this machine, opened when the sink was built: nothing to check before a run.
    public var isRemote: Bool { false }

    public func checkAvailability() async throws {}

    /// Opens (creating) the store at `directory`.
    /// - Parameters:
    ///   - mapSize: the most the data file may grow to (tests make it small to fill it). 256 GB by default: the
    ///     map reserves that much virtual address space while the store is open (nothing is allocated), and a
    ///     process's 128 TB of it must hold every store it has open at once — a 1 TB map let about 120 open
    ///     local stores exhaust it (`Cannot allocate memory` from the next `mdb_env_open`), which the test
    ///     suite reached. An existing data file larger than this is opened at its own size (LMDB's rule).
    ///   - index: exact scan or HNSW graph, and the graph's parameters.
    ///   - commitPages: the most pages (estimated) one write transaction of an upsert dirties; a larger
    ///     upsert commits in several steps, a document's records together when they fit (`sink.local_commit_pages`).
    public init(
        directory: URL,
        readOnly: Bool = false,
        mapSize: Int = 256 << 30,
        index: IndexSettings = IndexSettings(),
        commitPages: Int = PipelineConfiguration.Sink.defaultLocalCommitPages
    ) throws {
        if readOnly && !FileManager.default.fileExists(atPath: directory.appendingPathComponent("data.mdb").path) {
            throw SluiceError(.usage, "no local store at \(directory.path): run the pipeline first")
        }
        self.directory = directory
        self.readOnly = readOnly
        self.indexSettings = index
        self.commitPages = max(1, commitPages)
        // Its errors are the sink's (a full disk here is not the state's problem).
        // Not while a merge transaction of this process runs (`KeywordMerger.swift`, ``KeywordMerger/openGate``).
        environment = try KeywordMerger.openGate.withLock { _ in
            try LMDBEnvironment(
                path: directory,
                mapSize: mapSize,
                maxDatabases: 16,
                readOnly: readOnly,
                errors: .init(
                    code: .sinkFailed,
                    owner: "the local store at \(directory.path)",
                    damaged: (
                        .sinkFailed,
                        "Restore it from a backup, or delete the folder and run `sluice run PIPELINE --reembed` (the state's embedding cache makes that cheap)"
                    )
                )
            )
        }
        _ = try environment.database("vectors")
        _ = try environment.database("meta")
        // A store written before the graph existed has neither when opened read-only: it is scanned.
        if !readOnly {
            _ = try environment.database("ann")
            _ = try environment.database("ann-labels")
            // Opened here, never first inside a write transaction (opening one begins a transaction of its own).
            for name in [LocalIVFLayout.database, LocalIVFLayout.listsDatabase, LocalIVFLayout.whereDatabase] {
                _ = try environment.database(name)
            }
        }
        executor = BlockingExecutor(label: "sl-local-sink", threads: 1)
        commits = GroupCommit(executor: executor, budget: self.commitPages)
        readers = BlockingExecutor(
            label: "sl-local-read",
            threads: min(4, ProcessInfo.processInfo.activeProcessorCount)
        )
    }

    deinit {
        // No merge transaction outlives the sink (LMDB forbids a second open of the environment in the process
        // while this one is in use: it re-initializes the lock file's mutexes under a holder).
        keywordMerger.settle()
        executor.shutdown()
        readers.shutdown()
    }

    public func prepare(embedder: EmbedderIdentity) async throws {
        let environment = self.environment
        let path = directory.path
        try await executor.run {
            let meta = try environment.database("meta")
            let keywords = try KeywordIndex(writingTo: environment)
            try environment.write { txn in
                let stored = try txn.get(meta, Array("embedder".utf8)).map { String(decoding: $0, as: UTF8.self) }
                if let stored, stored != embedder.description {
                    let vectors = try environment.database("vectors")
                    if try txn.count(vectors) > 0 {
                        throw SluiceError(
                            .embedderMismatch,
                            "the local store at \(path) holds vectors of \(stored), not \(embedder); re-embed everything with --reembed or use another sink path"
                        )
                    }
                }
                try txn.put(meta, Array("embedder".utf8), Array(embedder.description.utf8))
                try txn.put(meta, Array("dimensions".utf8), Array(String(embedder.dimensions).utf8))
                // A store made before the keyword index gets it here.
                try keywords.ensureBuilt(txn, skipping: self.unreadable)
            }
            // A graph or lists that cannot be built leave searches scanning; the run goes on.
            try? self.ensureIndex(byWrite: false)
            try? self.ensureIVF()
        }
    }

    /// The embedder identity the store's vectors were made with, if any.
    public func storedEmbedder() throws -> String? {
        let meta = try environment.database("meta")
        return try environment.read { txn in
            try txn.get(meta, Array("embedder".utf8)).map { String(decoding: $0, as: UTF8.self) }
        }
    }

    /// Writes the records in one or more commits of at most `sink.local_commit_pages` pages (estimated), in order;
    /// a document's records share a commit when they fit in one (`LocalCommitPlan.swift`). Commits of other
    /// upserts waiting for the writer at the same time share its transaction (group commit, within the same
    /// bound): one sync for all of them. A kill between two commits leaves the first ones' records: the
    /// checkpoint is written only after the whole upsert, so the next run writes them again, and an upsert of
    /// a record already there replaces it.
    public func upsert(_ records: [VectorRecord]) async throws {
        guard !records.isEmpty else { return }
        // Tokenizing, building each commit's keyword segment and encoding run on the caller's task, so that
        // the writer thread only writes (and the callers prepare the next batches meanwhile).
        let encoded = records.map(LocalSink.encode)
        let plan = LocalCommitPlan.commits(
            documentKeys: records.map(\.documentKey),
            valueBytes: encoded.map(\.count),
            budget: commitPages
        )
        let commits = plan.map { range in
            let part = Array(records[range])
            return (records: part, batch: KeywordIndex.PreparedBatch(part), encoded: encoded[range])
        }
        for commit in commits {
            try await write(commit.records, batch: commit.batch, encoded: commit.encoded)
        }
    }

    /// One commit of an upsert: queued for the writer, which writes it in one transaction with the other
    /// commits waiting then (``GroupCommit``, bounded by `sink.local_commit_pages` together).
    private func write(
        _ records: [VectorRecord],
        batch: KeywordIndex.PreparedBatch,
        encoded: ArraySlice<[UInt8]>
    ) async throws {
        try throwFailedKeywordMerge()  // a full map met by a merge fails the next write
        let pages = encoded.reduce(0) { $0 + LocalCommitPlan.pages(valueBytes: $1.count) }
        try await commits.submit(LocalWrite(records: records, batch: batch, encoded: encoded), weight: pages) {
            [self] group in try self.commit(group)
        }
    }

    /// One write transaction for a group of upsert commits, in order: each one's keyword segment and records,
    /// then one change log entry (one generation) for them all. On the writer thread.
    private func commit(_ group: [LocalWrite]) throws {
        // A graph or lists that cannot be built leave searches scanning; the write itself goes on.
        try? ensureIndex()
        try? ensureIVF()
        let vectors = try environment.database("vectors")
        let keywords = try KeywordIndex(writingTo: environment)
        let (change, segments) = try environment.write { txn in
            try keywords.ensureBuilt(txn, skipping: unreadable)
            var segments: [KeywordSegment] = []
            for write in group {
                segments = try keywords.upsert(write.batch, txn)
                // The keyword index's puts are mostly sorted and rarely fault; the vectors' keys are random, and
                // each put faults a leaf with its neighbours: check the budget from the first of them on.
                txn.expectFaults()
                for (record, value) in zip(write.records, write.encoded) {
                    CrashPoint.reach("local.keywords-written")  // inside the transaction: nothing of it survives
                    try txn.put(vectors, Array(record.id.rawValue.utf8), value)
                }
            }
            let records = group.count == 1 ? group[0].records : group.flatMap(\.records)
            return (try self.recordUpsert(records, in: txn), segments)
        }
        CrashPoint.reach("local.upsert-committed")
        follow(change)
        requestKeywordMerges(keywords, after: segments)
        for write in group { documentKeys.upserted(write.records) }
    }

    public func delete(_ ids: [VectorID]) async throws {
        guard !ids.isEmpty else { return }
        let environment = self.environment
        try await executor.run {
            try self.throwFailedKeywordMerge()  // a full map met by a merge fails this write
            try? self.ensureIndex()
            try? self.ensureIVF()
            let vectors = try environment.database("vectors")
            let keywords = try KeywordIndex(writingTo: environment)
            let change = try environment.write { txn in
                try keywords.ensureBuilt(txn, skipping: self.unreadable)
                try keywords.remove(ids.map { Array($0.rawValue.utf8) }, txn)
                for id in ids { try txn.delete(vectors, Array(id.rawValue.utf8)) }
                return try self.recordDelete(ids, in: txn)
            }
            self.follow(change)
            self.requestKeywordMerges(keywords)
            self.documentKeys.deleted(ids)
        }
    }

    public func count() async throws -> Int {
        let vectors = try environment.database("vectors")
        return try environment.read { try $0.count(vectors) }
    }

    /// Every stored id, from the keys alone (a record that does not decode is listed too: `sluice verify`
    /// compares ids, and reports such records on their own).
    public func listIDs() async throws -> Set<VectorID>? {
        let vectors = try environment.database("vectors")
        var ids = Set<VectorID>()
        try environment.read { txn in
            try txn.forEach(vectors) { key, _ in
                ids.insert(VectorID(rawValue: String(decoding: key, as: UTF8.self)))
                return true
            }
        }
        return ids
    }

    public func search(_ query: [Float], k: Int) async throws -> [SearchHit] {
        try await search(SearchRequest(vector: query, k: k))
    }

    public func search(_ request: SearchRequest) async throws -> [SearchHit] {
        guard request.mode != .hybrid else {
            throw SluiceError(.usage, "\(name) ranks vector and keyword searches; hybrid is fused above the store")
        }
        // What this search skips goes into the caller's log too (the service's answer names it).
        let unreadable = self.unreadable.forSearch(UnreadableRecordLog.current)
        // A scan checks the caller's cancellation (a deadline, a client gone) as it goes: it stops then.
        // The memory releaser's `madvise` is kept out of the answer's latency: the search defers it (up to
        // twice the search budget) and the reader thread releases, past the search budget, once the caller has
        // its answer (``ResidentMemoryReleaser/deferringReleases(_:)``, ``ResidentMemoryReleaser/releaseAfterSearch()``).
        let releaser = ResidentMemoryReleaser.shared
        let release: @Sendable () -> Void = { releaser.releaseAfterSearch() }
        if request.mode == .keyword {
            // Restricted by access control: ranked among what the caller may read (`LocalKeywordAccess.swift`). A
            // filter naming the field otherwise (inside an `or`) is the operator's own: ranked over every record.
            var access: LocalKeywordAccess.Restriction?
            if let filter = request.filter, let field = indexSettings.accessField,
                case .conditions(let conditions) = AccessRestriction(filter, field: field)
            {
                access = LocalKeywordAccess.Restriction(field: field, conditions: conditions, tables: keywordAccess)
            }
            return try await readers.runCancellable(afterwards: release) { [access] cancellation in
                try releaser.deferringReleases {
                    try LocalSink.keywordSearch(
                        environment: self.environment,
                        request.text,
                        k: request.k,
                        filter: request.filter,
                        cancellation: cancellation,
                        skipping: unreadable,
                        access: access,
                        counting: { read in self.keywordReads.withLock { $0 += read } }
                    )
                }
            }
        }
        return try await readers.runCancellable(afterwards: release) { cancellation in
            try releaser.deferringReleases {
                // hnswlib 0.6.2 cannot filter while it searches: a filtered search is exact, its records read in
                // the order of the graph's bounds (LocalSink+FilteredSearch.swift), or scanned.
                guard let filter = request.filter else {
                    return try self.searchBest(request.vector, k: request.k, skipping: unreadable)
                }
                return try self.filteredSearch(
                    request.vector,
                    k: request.k,
                    filter: filter,
                    cancellation: cancellation,
                    skipping: unreadable
                )
            }
        }
    }

    /// The best `k` by cosine among the records that match `filter`, by a scan of every vector. The filter
    /// is evaluated only for records whose score would enter the current top k (decoding is the costly part).
    /// The scan stops with `CancellationError` once `cancellation` is set (checked every
    /// ``cancellationInterval`` records). A record that does not decode is skipped and noted in `unreadable`
    /// when there is one (a search), and fails the scan otherwise.
    static func exactSearch(
        environment: LMDBEnvironment,
        _ query: [Float],
        k: Int,
        filter: SearchFilter?,
        cancellation: CancellationFlag? = nil,
        skipping unreadable: LocalUnreadableRecords? = nil
    ) throws -> [SearchHit] {
        let vectors = try environment.database("vectors")
        let queryNorm = LocalSink.norm(query)
        guard queryNorm > 0, k > 0 else { return [] }
        var best: [SearchHit] = []
        var scanned = 0
        try environment.read { txn in
            // The records are copied from the file, not mapped: a scan reads the whole store, which would
            // pass the memory releaser's budget every 4 MB and fault each page back in (``LMDBValueFile``).
            try txn.forEach(vectors, largeValues: .copied) { key, value in
                scanned += 1
                if scanned % LocalSink.cancellationInterval == 0 { try cancellation?.check() }
                let score = LocalSink.cosine(query, queryNorm: queryNorm, encoded: value)
                guard best.count < k || score > best[best.count - 1].score else { return true }
                guard let record = try LocalSink.record(id: Array(key), value, skipping: unreadable) else {
                    return true
                }
                guard filter?.matches(record) ?? true else { return true }
                let index = best.firstIndex { $0.score < score } ?? best.count
                best.insert(SearchHit(score: score, record: record), at: index)
                if best.count > k { best.removeLast() }
                return true
            }
        }
        return best
    }

    /// How many records a scan reads between two looks at its cancellation flag.
    static let cancellationInterval = 256

    public func info() async throws -> SinkInfo {
        let meta = try environment.database("meta")
        let (embedder, dimensions) = try environment.read { txn in
            (
                try txn.get(meta, Array("embedder".utf8)).map { String(decoding: $0, as: UTF8.self) },
                try txn.get(meta, Array("dimensions".utf8)).flatMap { Int(String(decoding: $0, as: UTF8.self)) }
            )
        }
        return SinkInfo(
            name: name,
            count: try await count(),
            dimensions: dimensions,
            metric: "cosine",
            embedder: embedder,
            details: ["index": indexSettings.kind.rawValue].merging(try ivfDetails()) { $1 }
                .merging(try graphDetails()) { $1 }.merging(mapDetails()) { $1 }
        )
    }

    /// Every record that decodes, sorted by id; one that does not is skipped and named in ``readNotice`` (so
    /// `sluice export` writes the others and exits 2, as `search` does).
    public func exportAll(_ body: @Sendable (VectorRecord) throws -> Void) async throws {
        let vectors = try environment.database("vectors")
        try environment.read { txn in
            try txn.forEach(vectors, largeValues: .copied) { key, value in
                guard let record = try unreadable.record(id: Array(key), value) else { return true }
                try body(record)
                return true
            }
        }
    }

    public func removeAll() async throws {
        let environment = self.environment
        try await executor.run {
            // No merge planned before may be applied after: a pass runs only after a write asks for it.
            self.settleKeywordMerges()
            self.ivfState.trainer.stop()  // nor a training's part computed from the records before
            self.builder.stop()  // nor a graph built from them
            self.builder.settle()
            let vectors = try environment.database("vectors")
            let meta = try environment.database("meta")
            let postings = try environment.database(KeywordIndex.postingsDatabase)
            let keywordRecords = try environment.database(KeywordIndex.recordsDatabase)
            let change = try environment.write { txn in
                try txn.drop(vectors)
                try txn.drop(meta)
                try txn.drop(postings)
                try txn.drop(keywordRecords)
                return try self.recordClear(in: txn)
            }
            self.follow(change)
            self.documentKeys.cleared()
            self.removeIndexFiles(olderThan: nil)
        }
    }

    /// Lets the keyword merges catch up and saves the HNSW graph (see `LocalSink+ANN.swift`).
    public func finish() async throws {
        try await executor.run {
            self.settleKeywordMerges()
            try self.throwFailedKeywordMerge()  // the run's last merges too
            self.ivfState.trainer.settle()  // a training begun during the run ends with it
            try self.saveIndex()
        }
    }
}
