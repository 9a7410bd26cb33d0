import Foundation
import SluiceCore
import SluiceLMDB

#if canImport(Glibc)
import Glibc
#endif

/// The local store's HNSW index (`sink.local_index: hnsw`): bookkeeping in LMDB, the graph in memory
/// (``LocalANNIndex``), a saved copy beside the data. The LMDB data is the truth; the graph is a cache of it.
///
/// - The `ann` database holds `generation`, counted up by every write transaction of the store (whatever
///   `local_index` says, so that a graph saved before a run with `exact` is known stale), `next-label`,
///   `label/<label>` → vector id and `free/<label>` (labels of deleted vectors, given to the next new ids:
///   their graph slots are re-used); `ann-labels` maps a vector id to its label. All are written in the
///   vectors' own write transaction, by every write with `hnsw` while the `labels` mark says every record has
///   one (`LocalSink+ANNBuild.swift`), graph or not. After the commit, the same change is applied to the graph.
/// - The same transaction records the labels it touched in the change log (``LocalANNChangeLog``), so
///   that a graph of an older generation stays usable (`LocalSink+ANNReader.swift`).
/// - The change is applied to the graph by the follower (``LocalANNFollower``), on a thread of its own, while
///   the writer thread writes the next transaction: a write is tracked when the graph *will be* at the
///   generation before it (``LocalANNState/expectedGeneration``). The graph is at most one write behind the
///   store; searches in this process see it as any reader sees an older graph (with the change log), and
///   everything that needs the graph current (`finish()`, a rebuild, a catch-up) settles the follower first.
/// - `finish()` saves the graph as `hnsw-<generation>.index` (`sink.hnsw.nodes: memory`) or
///   `graph-<generation>.nodes` (`file`: the graph with its nodes in a file, whose working copy is an
///   unnamed file until the save links it under the temporary name) — temporary file, fsync, rename — and
///   trims the change log. Each kind loads only its own name.
/// - Below `sink.hnsw.exact_below` vectors no graph is built (searches scan there): a run's `prepare` that
///   finds the store at that size, or a write that finds it at twice that size, starts building it from a
///   snapshot on the builder's thread (`LocalSink+ANNBuild.swift`; the writes go on, searches scan until it
///   is handed over), and from then on it follows the store. `finish()` waits for a build under way, except
///   one a write started whose store has since shrunk below twice that size (``saveIndex()``).
/// - Before writing (`prepare`, upserts, deletes), a graph that does not match the store's generation
///   (none in memory, no saved file of that generation after a crash, a damaged file, a count that
///   differs) is caught up from the change log (a graph in memory, or loaded from its file), or built anew
///   from a snapshot when the log cannot do it. A search never builds: it uses a graph the change log can bring to the
///   generation its read transaction sees, and scans every vector otherwise.
extension LocalSink {
    /// What a write transaction did to the labels, applied to the graph after the commit.
    struct ANNChange {
        var generation: UInt64
        /// Whether the graph in memory followed this write (else it is caught up, loaded or built before the
        /// next one).
        var tracked: Bool
        /// Whether the write kept every record's label and wrote its change log entry (a graph of an earlier
        /// generation, or one being built from a snapshot, can then be brought up to it).
        var labelled: Bool
        var adds: [(label: UInt64, vector: [Float])] = []
        var deletes: [UInt64] = []
    }

    enum ANNKey {
        static let generation = Array("generation".utf8)
        static let nextLabel = Array("next-label".utf8)
        static let labelPrefix = Array("label/".utf8)
        static let freePrefix = Array("free/".utf8)
    }

    private var indexed: Bool { indexSettings.kind == .hnsw && !readOnly }

    // MARK: - In the write transaction

    /// Counts the generation up and, when the graph follows the store or with `ivf`, gives each record a
    /// label (and with `ivf` moves it in the lists, `LocalSink+IVF.swift`).
    func recordUpsert(_ records: [VectorRecord], in txn: LMDBTransaction) throws -> ANNChange {
        var change = try beginChange(in: txn)
        guard change.labelled || ivfIndexed else { return change }
        let (ann, labels) = (try environment.database("ann"), try environment.database("ann-labels"))
        var latest: [VectorID: Int] = [:]
        for (position, record) in records.enumerated() { latest[record.id] = position }
        var next = try txn.get(ann, ANNKey.nextLabel).map(Self.number) ?? 0
        for (position, record) in records.enumerated() where latest[record.id] == position {
            let id = Array(record.id.rawValue.utf8)
            if let label = try txn.get(labels, id).map(Self.number) {
                change.adds.append((label, record.vector))
                continue
            }
            let label: UInt64
            if let free = try firstFreeLabel(in: txn) {
                label = free
                try txn.delete(ann, ANNKey.freePrefix + Self.bytes(free))
            } else {
                label = next
                next += 1
            }
            try txn.put(labels, id, Self.bytes(label))
            try txn.put(ann, ANNKey.labelPrefix + Self.bytes(label), id)
            change.adds.append((label, record.vector))
        }
        try txn.put(ann, ANNKey.nextLabel, Self.bytes(next))
        if ivfIndexed { try ivfUpsert(change.adds, txn) }
        // A write with `ivf` keeps the labels but writes no change log entry: a gap the graph cannot bridge.
        guard change.labelled else { return change }
        try LocalANNChangeLog(environment: environment).record(change.generation, labels: change.adds.map(\.label), txn)
        CrashPoint.reach("local.change-logged")  // inside the transaction: nothing of it survives
        return change
    }

    /// Counts the generation up and frees the labels of deleted ids (with `ivf`, removes them from the lists).
    func recordDelete(_ ids: [VectorID], in txn: LMDBTransaction) throws -> ANNChange {
        var change = try beginChange(in: txn)
        guard change.labelled || ivfIndexed else { return change }
        let (ann, labels) = (try environment.database("ann"), try environment.database("ann-labels"))
        for id in Set(ids) {
            let key = Array(id.rawValue.utf8)
            guard let label = try txn.get(labels, key).map(Self.number) else { continue }
            try txn.delete(labels, key)
            try txn.delete(ann, ANNKey.labelPrefix + Self.bytes(label))
            try txn.put(ann, ANNKey.freePrefix + Self.bytes(label), [])
            change.deletes.append(label)
        }
        if ivfIndexed { try ivfDelete(change.deletes, txn) }
        guard change.labelled else { return change }
        try LocalANNChangeLog(environment: environment).record(change.generation, labels: change.deletes, txn)
        return change
    }

    /// Counts the generation up and forgets every label (the store is being emptied).
    func recordClear(in txn: LMDBTransaction) throws -> ANNChange {
        let ann = try environment.database("ann")
        let generation = (try txn.get(ann, ANNKey.generation).map(Self.number) ?? 0) + 1
        try txn.drop(ann)
        try txn.drop(try environment.database("ann-labels"))
        try txn.put(ann, ANNKey.generation, Self.bytes(generation))
        try ivfClear(txn)
        return ANNChange(generation: generation, tracked: false, labelled: false)
    }

    private func beginChange(in txn: LMDBTransaction) throws -> ANNChange {
        let ann = try environment.database("ann")
        let previous = try txn.get(ann, ANNKey.generation).map(Self.number) ?? 0
        try txn.put(ann, ANNKey.generation, Self.bytes(previous + 1))
        let tracked = indexed && annState.expectedGeneration == previous
        // With `hnsw`, every write keeps the labels while every record has one (the `labels` mark): a graph
        // followed by the store has them all, and so does a store written so from empty, so that the first
        // graph is built from a snapshot, off the writer thread, and caught up by the change log.
        let marked = try labelsMarked(txn)
        let labelled = indexed && (tracked || marked)
        if labelled && !marked { try markLabelled(txn) }
        // A write that does not keep the IVF lists retires them (and the labels, unless this write keeps them).
        if !ivfIndexed { try ivfInvalidate(keepingLabels: labelled, txn) }
        return ANNChange(generation: previous + 1, tracked: tracked, labelled: labelled)
    }

    private func firstFreeLabel(in txn: LMDBTransaction) throws -> UInt64? {
        var found: UInt64?
        try txn.forEach(try environment.database("ann"), from: ANNKey.freePrefix) { key, _ in
            if key.count == ANNKey.freePrefix.count + 8, key.starts(with: ANNKey.freePrefix) {
                found = Self.number(Array(key.dropFirst(ANNKey.freePrefix.count)))
            }
            return false
        }
        return found
    }

    // MARK: - After the commit

    /// Hands a committed change to the follower (on the writer thread, right after the commit); blocks while
    /// the follower still applies the previous one. A change the graph did not follow drops the graph.
    func follow(_ change: ANNChange) {
        guard change.tracked else {
            // A labelled write leaves an older graph usable (the change log brings it up before the next
            // write, `ensureIndex()`) and a build under way too.
            guard indexed, !change.labelled else { return }
            follower.settle()  // nothing handed over earlier may set a graph after this
            annState.lose()
            return
        }
        annState.expect(change.generation)
        follower.hand { self.apply(change) }
    }

    /// Applies a committed change to the graph (on the follower's thread). A graph that cannot follow (out
    /// of memory) is dropped: searches scan, and the next write rebuilds it.
    func apply(_ change: ANNChange) {
        guard var live = annState.live else {
            annState.lose()
            return
        }
        do {
            if live.index == nil, let first = change.adds.first {
                live.index = try LocalANNIndex(
                    dimensions: first.vector.count,
                    capacity: max(1024, change.adds.count),
                    settings: indexSettings,
                    directory: directory
                )
            }
            try live.index?.add(change.adds, threads: indexSettings.buildThreads)
            for label in change.deletes { try live.index?.markDeleted(label) }
            live.generation = change.generation
            live.dirty = true
            annState.set(live)
            annState.applied(change.generation)
        } catch {
            annState.lose()
        }
    }

    /// Waits for the follower to apply every change handed over and for a build under way to end, and brings
    /// a graph left behind the store (built while writes went on) up by the change log; the graph in memory
    /// is then what ``LocalANNState/live`` says (none when it could not follow or be built). On the writer
    /// thread where the graph must be complete (an explicit rebuild), or in tests.
    func settleIndex() {
        settleFollower()
        builder.hurry()
        builder.settle()
        try? catchUpToStore()
    }

    /// Brings a graph in memory that is behind the store (a build handed it over while writes went on, or
    /// another process wrote) up to the store's generation by the change log, on the writer thread. A graph
    /// the log cannot bring up stays as it is (searches use it with the log, or scan).
    func catchUpToStore() throws {
        let ann = try environment.database("ann")
        let generation = try environment.read { try $0.get(ann, ANNKey.generation).map(Self.number) ?? 0 }
        guard let live = annState.live, live.index != nil, live.generation != generation,
            let caught = try caughtUp(live, threads: indexSettings.buildThreads, batch: Self.catchUpBatch),
            caught.generation == generation
        else { return }
        annState.set(caught)
    }

    /// Waits for the follower alone (the writer's own path: a build under way goes on).
    func settleFollower() {
        follower.settle()
        annState.resetFollowing()
    }

    /// Makes the graph in memory match the store before a write, on the writer thread: nothing to do, bring
    /// the graph in memory (followed before, or just built) up by the change log, load the saved one, or start
    /// a build from a snapshot (``startIndexBuild(byWrite:)``; the writes go on meanwhile, and searches scan).
    /// `byWrite`: a write asks (not `prepare`): it starts a build only when the store holds twice
    /// `exact_below` vectors or more, see ``saveIndex()``.
    func ensureIndex(byWrite: Bool = true) throws {
        guard indexed, !annState.rebuildFailed else { return }
        let vectors = try environment.database("vectors")
        let ann = try environment.database("ann")
        let (generation, count) = try environment.read { txn in
            (try txn.get(ann, ANNKey.generation).map(Self.number) ?? 0, try txn.count(vectors))
        }
        if annState.expectedGeneration == generation { return }
        settleFollower()
        if annState.live?.generation == generation { return }
        if count == 0 { try markLabelledWhenEmpty() }
        if count < indexSettings.exactBelow {
            // Searches scan below `exact_below` and never ask the graph: none is built or kept until a write
            // finds the store at that size (it is then built from a snapshot). A graph that already follows the
            // store keeps following it (above), so a store hovering around the size is not rebuilt again.
            annState.set(nil)
            return
        }
        // A graph of an older generation (a build that ended, another process's writes): the change log
        // brings it up here, a few writes' worth of inserts.
        try? catchUpToStore()
        if annState.live?.generation == generation { return }
        if builder.isRunning { return }  // the writes are labelled meanwhile: the build catches up with them
        if count == 0 {
            annState.set(.init(index: nil, generation: generation, dirty: true))
        } else if let saved = loadNewestSavedIndex(generation: generation, count: count),
            let live = try? caughtUp(saved, threads: indexSettings.buildThreads, batch: Self.catchUpBatch),
            live.generation == generation
        {
            // A graph saved before a crash is brought up to date from the change log: no rebuild.
            annState.set(live)
            // Older graphs left by a process killed before it removed them (a caught-up graph is saved,
            // and the older files removed, by `finish()`).
            if !live.dirty { removeIndexFiles(olderThan: generation) }
        } else if byWrite && count < 2 * indexSettings.exactBelow {
            // A write does not start the first build below twice `exact_below`: `finish()` would stop it
            // (``saveIndex()``), its inserts wasted. Searches scan up to that size meanwhile, the scan
            // `finish()` accepts; the next writer's `prepare` builds it, or a write of this run at that size.
            annState.set(nil)
        } else {
            try startIndexBuild(byWrite: byWrite)
        }
    }

    /// Builds the graph from every vector in LMDB with new labels, at once on the calling thread (the
    /// relabelling in one write transaction, the graph from the snapshot after it), and saves it. The writer's
    /// own path builds in the background instead (``ensureIndex(byWrite:)``).
    package func rebuildIndex() throws {
        settleIndex()
        try environment.write { try relabelAll($0) }
        CrashPoint.reach("local.index-relabelled")
        guard let built = try buildFromSnapshot(threads: indexSettings.buildThreads, batch: 4096, stop: { false })
        else {
            throw SluiceError(.sinkFailed, "the graph could not be built: a record has no label")
        }
        annState.set(built)
        try saveIndex()
    }

    /// Saves a changed graph as `hnsw-<generation>.index` and removes older files (`finish()`); with
    /// `exact`, removes any saved graph.
    ///
    /// A build under way is waited for, and its graph brought up to the store and saved, unless a write of
    /// this process started it and the store holds fewer than twice `exact_below` vectors: that build is
    /// stopped and left to the next writer (its `prepare` starts it again, and its `finish()` waits for it).
    /// Searches scan meanwhile, at most twice the scan that `exact_below` accepts, so a run that just grew
    /// the store past `exact_below` does not end with the whole graph's build. (A write starts the build only
    /// at twice `exact_below` (``ensureIndex(byWrite:)``), so such a build is one whose store shrank since.)
    func saveIndex() throws {
        guard !readOnly else { return }
        guard indexSettings.kind == .hnsw else {
            removeIndexFiles(olderThan: nil)
            return
        }
        settleFollower()
        let vectors = try environment.database("vectors")
        let ann = try environment.database("ann")
        let (generation, count) = try environment.read { txn in
            (try txn.get(ann, ANNKey.generation).map(Self.number) ?? 0, try txn.count(vectors))
        }
        if builder.isRunning {
            if builder.startedByWrite && count < 2 * indexSettings.exactBelow { builder.stop() }
            // The load is over: the build now inserts on every core (it kept one for the pipeline).
            builder.hurry()
            builder.settle()
        }
        try? catchUpToStore()
        if count < indexSettings.exactBelow, !builder.isRunning, annState.live?.index == nil {
            // No graph is built or saved below `exact_below`, but the writes still log their labels (kept for
            // the build once the store grows): the log is trimmed as a save trims it, or it would only grow.
            let log = LocalANNChangeLog(environment: environment)
            try environment.write { try log.trim(keepingLabels: LocalANNChangeLog.retainedLabels, $0) }
        }
        // Only a graph of the store's generation is saved (the log is trimmed after it).
        guard let live = annState.live, live.dirty, live.generation == generation else { return }
        let file = indexFile(generation: live.generation)
        if let index = live.index {
            let temporary = Self.temporaryFile(for: file)
            try index.save(to: temporary)
            CrashPoint.reach("local.index-written")
            DebugPause.at("INDEX", path: directory.path)
            try Self.durablyRename(temporary, to: file)
            CrashPoint.reach("local.index-renamed")
            // The saved graph covers the whole log; the newest entries stay for readers holding older graphs.
            let log = LocalANNChangeLog(environment: environment)
            try environment.write { try log.trim(keepingLabels: LocalANNChangeLog.retainedLabels, $0) }
            CrashPoint.reach("local.change-log-trimmed")
        }
        removeIndexFiles(olderThan: live.index == nil ? nil : live.generation)
        annState.markSaved()
    }

    func firstVectorDimensions() throws -> Int? {
        let vectors = try environment.database("vectors")
        return try environment.read { txn in
            var dimensions: Int?
            try txn.forEach(vectors) { _, value in
                dimensions = Self.vector(encoded: value)?.count
                return false
            }
            return dimensions
        }
    }

    /// The saved graph of `generation`: `hnsw-<generation>.index` (hnswlib's file, `sink.hnsw.nodes: memory`) or
    /// `graph-<generation>.nodes` (the graph with its nodes in a file, `file`). Each kind loads only its own
    /// name, so a store switched from one to the other builds its graph again (the writer) or scans (a reader).
    func indexFile(generation: UInt64) -> URL {
        directory.appendingPathComponent(Self.savedName(generation: generation, nodes: indexSettings.nodes))
    }

    static func savedName(generation: UInt64, nodes: PipelineConfiguration.Sink.HNSW.Nodes) -> String {
        switch nodes {
        case .memory: "hnsw-\(generation).index"
        case .file: "graph-\(generation).nodes"
        }
    }

    /// A save's temporary file beside `file`, named for this process (`hnsw-<generation>.index.<pid>.tmp`):
    /// processes that share the store (shards) may save the same generation at the same moment, and must
    /// never write, rename or remove each other's temporary file.
    static func temporaryFile(for file: URL) -> URL {
        URL(fileURLWithPath: file.path + ".\(getpid()).tmp")
    }

    /// Removes saved graphs older than `generation` or than the newest saved graph (every saved graph when
    /// nil: the store has no graph) and the temporary files of saves whose process is gone (killed mid-save).
    /// A newer graph, saved meanwhile by another process sharing the store, is kept (this process's own older
    /// one goes), and so is another live process's save in progress.
    /// Saved graphs of the other kind (`sink.hnsw.nodes`) are removed too: they are not used.
    func removeIndexFiles(olderThan generation: UInt64?) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path) else { return }
        let nodes = indexSettings.nodes
        let newest = names.compactMap { Self.savedGeneration($0, nodes: nodes) }.max()
        let generation = generation.map { max($0, newest ?? $0) }
        for name in names where name.hasPrefix("hnsw-") || name.hasPrefix("graph-") {
            let remove: Bool
            if name.hasSuffix(".tmp") {
                // hnsw-<generation>.index.<pid>.tmp (or graph-<generation>.nodes.<pid>.tmp), or the older
                // hnsw-<generation>.index.tmp (no owner).
                let parts = name.split(separator: ".")
                let owner = parts.count == 4 ? Int32(parts[2]) : nil
                remove = owner.map { $0 != getpid() && kill($0, 0) != 0 && errno == ESRCH } ?? true
            } else if let number = Self.savedGeneration(name, nodes: nodes) {
                remove = generation.map { number < $0 } ?? true
            } else if Self.savedGeneration(name, nodes: nodes == .memory ? .file : .memory) != nil {
                remove = true
            } else {
                remove = false
            }
            if remove { try? FileManager.default.removeItem(at: directory.appendingPathComponent(name)) }
        }
    }

    /// The generation of a saved graph's file name of the kind `nodes` (`hnsw-<generation>.index` or
    /// `graph-<generation>.nodes`), nil for any other name.
    static func savedGeneration(_ name: String, nodes: PipelineConfiguration.Sink.HNSW.Nodes) -> UInt64? {
        let (prefix, suffix) = nodes == .memory ? ("hnsw-", ".index") : ("graph-", ".nodes")
        guard name.hasPrefix(prefix), name.hasSuffix(suffix) else { return nil }
        return UInt64(name.dropFirst(prefix.count).dropLast(suffix.count))
    }

    // MARK: - For the benchmark

    /// Fixes the graph's search breadth (`ef`) for the rest of this process, whatever `sink.hnsw.ef_search`
    /// says (the benchmark measures several; tests look at every node).
    package func setSearchBreadth(_ ef: Int) { annState.breadth = ef }

    /// Bytes the graph holds in memory, when there is one.
    package var indexMemoryBytes: Int? { annState.live?.index?.memoryBytes }

    /// The breadth `auto` gives a search of the graph in memory in a store of `vectors` vectors (whether its
    /// codes are trained counts with the nodes in a file), when there is a graph.
    package func autoSearchBreadth(vectors: Int) -> Int? {
        guard let index = annState.live?.index else { return nil }
        return indexSettings.searchBreadth(vectors: vectors, codesTrained: index.codeBytes > 0)
    }

    // MARK: - Encoding

    static func bytes(_ value: UInt64) -> [UInt8] { withUnsafeBytes(of: value.bigEndian) { Array($0) } }

    static func number(_ bytes: [UInt8]) -> UInt64 {
        guard bytes.count == 8 else { return 0 }
        return bytes.reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// The vector at the front of an encoded record.
    static func vector(encoded: UnsafeRawBufferPointer) -> [Float]? {
        guard encoded.count >= 4 else { return nil }
        let dimension = Int(UInt32(littleEndian: encoded.loadUnaligned(as: UInt32.self)))
        guard encoded.count >= 4 + dimension * 4 else { return nil }
        return (0..<dimension).map { encoded.loadUnaligned(fromByteOffset: 4 + $0 * 4, as: Float.self) }
    }

    /// fsyncs `file`, renames it to `destination` and fsyncs the folder, so that the rename survives a crash.
    private static func durablyRename(_ file: URL, to destination: URL) throws {
        try fsyncPath(file.path, flags: O_RDWR)
        guard rename(file.path, destination.path) == 0 else {
            throw SluiceError(.sinkFailed, "rename to \(destination.path): \(String(cString: strerror(errno)))")
        }
        try fsyncPath(destination.deletingLastPathComponent().path, flags: O_RDONLY)
    }

    private static func fsyncPath(_ path: String, flags: Int32) throws {
        let fd = open(path, flags | O_CLOEXEC)
        guard fd >= 0 else {
            throw SluiceError(.sinkFailed, "cannot open \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        guard fsync(fd) == 0 else {
            throw SluiceError(.sinkFailed, "fsync \(path): \(String(cString: strerror(errno)))")
        }
    }
}
