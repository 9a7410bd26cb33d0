import Foundation
import SluiceCore
import SluiceLMDB

/// Building the local store's graph when it has none (the store grew past `sink.hnsw.exact_below`, the saved
/// graph is gone or older than the change log reaches, the graph could not follow a write), off the writer
/// thread (``LocalANNBuilder``):
///
/// - Every record already has a label: with `hnsw`, a write keeps the labels (and writes its change log
///   entry) while the `labels` mark (`ivf` database, ``LocalIVFLayout/labels``) says every record has one.
///   The mark is set on an empty store and by a write the graph follows, and removed by a write that does not
///   keep the labels (`exact`). A store without it (written with `exact`, or before the mark) is relabelled
///   once, in one write transaction of puts on the writer thread (``relabelAll(_:)``), before the build.
/// - The builder reads every record's vector and label from one read snapshot (generation `G`) and inserts
///   them; no write transaction waits for it. The records are copied from the data file with `pread`
///   (``LMDBTransaction/LargeValues/copied``), as the large scans read them, so the build does not fault the
///   store's map in. The writes meanwhile are labelled and logged, and searches scan (no graph yet), as below
///   `exact_below`.
/// - It then brings the graph from `G` to the store's generation by the change log, as a saved graph is
///   (``caughtUp(_:threads:batch:)``), and hands it over (``LocalANNState/adopt(_:)``): searches use it with
///   the log at once, and the writer's next write catches it up to the last few writes on its own thread
///   (``ensureIndex(byWrite:)``), after which the follower follows every write as before.
/// - Nothing of the build is stored until `finish()` saves the graph: a `kill -9` during it leaves the store as
///   the writes left it, and the next writer builds again.
extension LocalSink {
    // MARK: - The labels mark

    /// Whether every record has a label (the `labels` mark).
    func labelsMarked(_ txn: LMDBTransaction) throws -> Bool {
        try txn.get(try environment.database(LocalIVFLayout.database), LocalIVFLayout.labels) != nil
    }

    /// Sets the `labels` mark (in the transaction that makes it true).
    func markLabelled(_ txn: LMDBTransaction) throws {
        try txn.put(try environment.database(LocalIVFLayout.database), LocalIVFLayout.labels, [])
    }

    /// An empty store's every record has a label: marks it so, unless it is marked (a write of its own).
    func markLabelledWhenEmpty() throws {
        let vectors = try environment.database("vectors")
        try environment.write { txn in
            guard try txn.count(vectors) == 0, !(try labelsMarked(txn)) else { return }
            try markLabelled(txn)
        }
    }

    /// Gives every record a new label (the change log and the free labels go with the old ones: a gap no
    /// older graph bridges), counts the generation up and sets the `labels` mark. Puts only: no graph.
    func relabelAll(_ txn: LMDBTransaction) throws {
        let (vectors, ann, labels) = (
            try environment.database("vectors"), try environment.database("ann"),
            try environment.database("ann-labels")
        )
        let generation = (try txn.get(ann, ANNKey.generation).map(Self.number) ?? 0) + 1
        try txn.drop(ann)
        try txn.drop(labels)
        try txn.put(ann, ANNKey.generation, Self.bytes(generation))
        try ivfInvalidate(keepingLabels: true, txn)  // new labels: the IVF lists' are the old ones
        var next: UInt64 = 0
        try txn.forEach(vectors) { key, _ in
            try txn.put(labels, Array(key), Self.bytes(next))
            try txn.put(ann, ANNKey.labelPrefix + Self.bytes(next), Array(key))
            next += 1
            return true
        }
        try txn.put(ann, ANNKey.nextLabel, Self.bytes(next))
        try markLabelled(txn)
    }

    // MARK: - The build

    /// The changed vectors a catch-up (the build's, the writer's, a saved graph's on load) reads and inserts
    /// at a time: it holds one batch of them as floats (0.4 MB at 384 dimensions); 4,096 held 6.3 MB at the
    /// 10× load's peak with the nodes in a file (docs/LOCAL_INDEX.md). The build's own batch is the same.
    /// (A reader's catch-up in the background takes 64.)
    static let catchUpBatch = 256

    /// Starts building the graph on the builder's thread (on the writer thread; relabels first when the store
    /// is not marked). `byWrite`: a write of this process asks, not `prepare` (``saveIndex()``'s rule).
    func startIndexBuild(byWrite: Bool) throws {
        guard !builder.isRunning else { return }
        let marked = try environment.read { try labelsMarked($0) }
        if !marked {
            try environment.write { try relabelAll($0) }
            CrashPoint.reach("local.index-relabelled")
        }
        builder.start(byWrite: byWrite) { self.runIndexBuild() }
    }

    /// The build's body, on the builder's thread: the graph from a snapshot, caught up by the change log and
    /// handed over. A build that fails (out of memory), or whose graph does not hold the store's records (one
    /// that does not decode), is not tried again by this process: searches scan. A build that meets a gap in
    /// the change log (a clear, a write with `exact` meanwhile) is dropped: the next write starts another.
    private func runIndexBuild() {
        let builder = self.builder
        do {
            let cores = indexSettings.buildThreads
            // Batches of 256: about 25 ms of inserts, so `finish()` waits that long for a build it stops, and
            // a build it waits for moves to every core within a batch (``LocalANNBuilder/hurry()``).
            guard
                let built = try buildFromSnapshot(
                    threads: builder.threads(of: cores),
                    batch: 256,
                    stop: { builder.isStopped }
                ),
                built.index != nil
            else { return }
            CrashPoint.reach("local.index-built")
            builder.reachCatchUp()
            guard !builder.isStopped else { return }
            if let caught = try caughtUp(built, threads: builder.threads(of: cores), batch: Self.catchUpBatch) {
                annState.adopt(caught)
                return
            }
            let log = LocalANNChangeLog(environment: environment)
            let ann = try environment.database("ann")
            let bridged = try environment.read { txn in
                try log.covers(
                    after: built.generation,
                    through: try txn.get(ann, ANNKey.generation).map(Self.number) ?? 0,
                    txn
                )
            }
            if bridged { annState.rebuildFailed = true }
        } catch {
            annState.rebuildFailed = true
        }
    }

    /// A graph of every record's vector under its label, from one read snapshot, at that snapshot's
    /// generation; nil when `stop` says so between batches or when a record has no label (the mark is gone).
    /// `threads`: hnswlib's insert threads, read again for each batch (the background build leaves one core
    /// to the load until someone waits for it); `batch`: the vectors inserted between two looks at `stop` (a
    /// stopped build ends within one batch's inserts).
    func buildFromSnapshot(
        threads: @autoclosure () -> Int,
        batch size: Int,
        stop: () -> Bool
    ) throws -> LocalANNState.Live? {
        // Handles first: a writable environment opens a database in a write transaction of its own.
        let (vectors, ann, labels, _) = (
            try environment.database("vectors"), try environment.database("ann"),
            try environment.database("ann-labels"), try environment.database(LocalIVFLayout.database)
        )
        let settings = indexSettings
        let folder = directory
        return try environment.read { txn -> LocalANNState.Live? in
            guard try labelsMarked(txn) else { return nil }
            let generation = try txn.get(ann, ANNKey.generation).map(Self.number) ?? 0
            let count = try txn.count(vectors)
            var index: LocalANNIndex?
            var batch: [(label: UInt64, vector: [Float])] = []
            var complete = true
            func flush() throws {
                guard let first = batch.first else { return }
                if index == nil {
                    index = try LocalANNIndex(
                        dimensions: first.vector.count,
                        capacity: count + count / 8,
                        settings: settings,
                        directory: folder
                    )
                }
                try index?.add(batch, threads: threads())
                batch.removeAll(keepingCapacity: true)
            }
            // Every vector once: copied from the data file, not mapped (the map would fault them all in, past
            // the releaser's budget between two of its checks).
            try txn.forEach(vectors, largeValues: .copied) { key, value in
                guard let label = try txn.get(labels, Array(key)).map(Self.number) else {
                    complete = false
                    return false
                }
                guard let vector = Self.vector(encoded: value) else { return true }
                batch.append((label, vector))
                if batch.count == size {
                    try flush()
                    if stop() {
                        complete = false
                        return false
                    }
                }
                return true
            }
            guard complete, !stop() else { return nil }
            try flush()
            return .init(index: index, generation: generation, dirty: true)
        }
    }
}
