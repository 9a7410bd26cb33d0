import Foundation
import SluiceCore
import SluiceLMDB

/// Searching with the graph while another process writes: a reader (`sluice serve`, `sluice search`)
/// holds a graph of some generation, and the store moves on with every write transaction of the writer
/// (`sluice run`). The change log (``LocalANNChangeLog``) says which labels changed since the graph's
/// generation: a search drops the graph's hits among them and scores their current records exactly, so
/// it answers from the graph at any later generation the log covers. When the changes grow past
/// ``LocalANNChangeLog/catchUpAfter`` labels, the reader brings its graph up to date in the background, as
/// the writer does (add the changed vectors, mark the freed labels deleted), so a search's cost stays
/// bounded. When its graph cannot be used (none yet, or the log has a gap: a rebuild, a clear, trimmed
/// entries), it loads the newest saved graph the log covers; until then, and when there is none, it scans.
extension LocalSink {
    /// The best `k` by a scan of every vector (the truth the graph is measured against).
    /// A record that does not decode is skipped and noted in `unreadable` (the sink's list by default).
    func exactSearch(_ query: [Float], k: Int, skipping unreadable: LocalUnreadableRecords? = nil) throws -> [SearchHit]
    {
        try Self.exactSearch(
            environment: environment,
            query,
            k: k,
            filter: nil,
            skipping: unreadable ?? self.unreadable
        )
    }

    /// The best `k` by cosine: from the graph when the change log brings it to what this read transaction
    /// sees and the store is large enough (`exact_below`), else by an exact scan. Runs on a reader thread; a
    /// record that does not decode is skipped and noted in `unreadable`.
    func searchBest(_ query: [Float], k: Int, skipping unreadable: LocalUnreadableRecords) throws -> [SearchHit] {
        if indexSettings.kind == .ivf {
            return try searchIVF(query, k: k, skipping: unreadable) ?? exactSearch(query, k: k, skipping: unreadable)
        }
        // A store written before the graph existed, opened read-only, has no `ann` database: it is scanned.
        guard indexSettings.kind == .hnsw, let ann = try environment.existingDatabase("ann") else {
            return try exactSearch(query, k: k, skipping: unreadable)
        }
        let vectors = try environment.database("vectors")
        // One read transaction finds the store's size and, when the graph can answer, answers: each
        // transaction costs its begin and the releaser's two reads of `/proc/self/statm`.
        // The graph is taken before the transaction begins: it is never newer than what it sees.
        let live = annState.live
        let (generation, count, hits) = try environment.read { txn -> (UInt64, Int, [SearchHit]?) in
            let generation = try txn.get(ann, ANNKey.generation).map(Self.number) ?? 0
            let count = try txn.count(vectors)
            guard count >= indexSettings.exactBelow, let live else { return (generation, count, nil) }
            let hits = try searchGraph(
                query,
                k: k,
                breadth: { self.searchBreadth(vectors: count, index: $0) },
                live: live,
                generation: generation,
                txn
            )
            return (generation, count, hits)
        }
        if count < indexSettings.exactBelow { return try exactSearch(query, k: k, skipping: unreadable) }
        if let hits { return hits }
        // The breadth is the loaded graph's (whether its codes are trained).
        if loadNewerSavedIndex(generation: generation, count: count), let index = annState.live?.index,
            let hits = try searchGraph(query, k: k, breadth: searchBreadth(vectors: count, index: index))
        {
            return hits
        }
        return try exactSearch(query, k: k, skipping: unreadable)
    }

    /// The best `k` from the graph in memory (a search keeping `breadth` candidates) and the records changed
    /// since its generation, or nil when there is no graph or the change log cannot bring it to the
    /// generation this read transaction sees.
    func searchGraph(_ query: [Float], k: Int, breadth: Int) throws -> [SearchHit]? {
        // Taken before the read transaction begins: the graph is never newer than what it sees.
        guard let live = annState.live else { return nil }
        let ann = try environment.database("ann")
        return try environment.read { txn in
            let generation = try txn.get(ann, ANNKey.generation).map(Self.number) ?? 0
            return try searchGraph(query, k: k, breadth: { _ in breadth }, live: live, generation: generation, txn)
        }
    }

    /// The breadth of a search of `index` in a store of `vectors` vectors: fixed for this process
    /// (``setSearchBreadth(_:)``), else the settings' for the store's size and whether the graph's codes are
    /// trained (``IndexSettings/searchBreadth(vectors:codesTrained:)``).
    func searchBreadth(vectors: Int, index: LocalANNIndex) -> Int {
        annState.breadth ?? indexSettings.searchBreadth(vectors: vectors, codesTrained: index.codeBytes > 0)
    }

    /// ``searchGraph(_:k:breadth:)`` in `txn`, which sees the store at `generation`, with `live` (taken before
    /// `txn` began).
    private func searchGraph(
        _ query: [Float],
        k: Int,
        breadth: (LocalANNIndex) -> Int,
        live: LocalANNState.Live,
        generation: UInt64,
        _ txn: LMDBTransaction
    ) throws -> [SearchHit]? {
        guard let index = live.index else { return nil }
        let breadth = breadth(index)
        let (ann, vectors) = (try environment.database("ann"), try environment.database("vectors"))
        let log = LocalANNChangeLog(environment: environment)
        let queryNorm = Self.norm(query)
        // Read from LMDB once per pair of generations (``LocalANNChangedLabels``), not by every search.
        guard
            let changed = try changedLabels.labels(
                graphGeneration: live.generation,
                storeGeneration: generation,
                read: { try log.labels(after: live.generation, through: generation, txn) }
            )
        else { return nil }
        if changed.count > LocalANNChangeLog.catchUpAfter { scheduleCatchUp() }
        // Every hit is read from this transaction: a label maps to the id it holds now, scored from
        // the vector stored now (as the scan scores it), so nothing deleted or stale is returned. A record on
        // pages of its own (a real chunk with its text, 1–4 KB) is copied from the data file, not read through
        // the map: its pages are never mapped, so a search neither faults them in with their neighbours nor
        // brings the releaser's next `madvise` nearer (docs/LOCAL_INDEX.md, "What a search maps").
        func candidate(_ label: UInt64) throws -> Candidate? {
            guard let id = try txn.get(ann, ANNKey.labelPrefix + Self.bytes(label)),
                let bytes = try txn.get(vectors, id, largeValues: .copied)
            else { return nil }
            let score = bytes.withUnsafeBytes { Self.cosine(query, queryNorm: queryNorm, encoded: $0) }
            return Candidate(score: score, id: id, bytes: bytes)
        }
        var candidates: [Candidate] = []
        // The graph's entries for changed labels are out of date: drop them, and ask for more when
        // dropping left fewer than k. The graph ranks by quantized vectors: it is asked for more than k,
        // and the candidates are ranked again by their stored vectors.
        var wanted = LocalANNIndex.candidates(for: k)
        candidates.reserveCapacity(wanted + changed.count)
        while true {
            let found = index.search(query, k: wanted, breadth: breadth)
            candidates.removeAll(keepingCapacity: true)
            var dropped = 0
            for (label, _) in found {
                if changed.contains(label) {
                    dropped += 1
                } else if let hit = try candidate(label) {
                    candidates.append(hit)
                }
            }
            let most = LocalANNIndex.candidates(for: k) + changed.count
            if dropped == 0 || candidates.count >= k || found.count < wanted || wanted >= most { break }
            wanted = min(most, max(2 * wanted, k + 2 * dropped))
        }
        for label in changed {
            if let hit = try candidate(label) { candidates.append(hit) }
        }
        candidates.sort { $0.score > $1.score }
        // A record that does not decode is skipped (``LocalUnreadableRecords``): the next candidate takes
        // its place.
        var hits: [SearchHit] = []
        for candidate in candidates where hits.count < k {
            guard let record = try unreadable.record(id: candidate.id, candidate.bytes) else { continue }
            hits.append(SearchHit(score: candidate.score, record: record))
        }
        return hits
    }

    /// A record the graph proposed, scored from its stored vector.
    private struct Candidate {
        var score: Float
        var id: [UInt8]
        var bytes: [UInt8]
    }

    // MARK: - Bringing the graph up to date

    /// Starts bringing the graph up to date on the sink's writer thread (idle in a read-only store),
    /// unless that or a load is under way. Searches go on with the change log meanwhile.
    private func scheduleCatchUp() {
        guard annState.beginBusy() else { return }
        Task {
            do {
                try await self.executor.run {
                    defer { self.annState.endBusy() }
                    self.catchUpIndex()
                }
            } catch {
                self.annState.endBusy()  // the work never ran (the sink is closing)
            }
        }
    }

    /// Brings the graph in memory to the store's generation by the change log (a graph that cannot be
    /// brought up to date stays as it is: searches use the log, or scan). The caller holds the busy mark.
    func catchUpIndex() {
        settleFollower()  // in the writing process: what was handed to the follower first (a build goes on)
        guard let live = annState.live, live.index != nil,
            let caught = try? caughtUp(live, threads: 1, batch: 64)
        else { return }
        annState.adopt(caught)
    }

    /// `live`'s graph brought to the store's generation: the vectors of the labels changed since its
    /// generation added (or replaced), the freed labels marked deleted. Changes the graph in place, in
    /// batches of `batch` vectors so that searches get the graph between them; the vectors are read from the
    /// one snapshot a batch at a time, so a long catch-up (a graph built while a load went on: 115,000
    /// vectors, 177 MB as floats, at the 10× corpus with `sink.hnsw.nodes: file`) never holds more than one
    /// batch of them (``LocalANNState/mostCatchUpVectorsHeld``), and copied from the data file rather than
    /// mapped. Nil when the change log does not reach back to the graph's generation, or when the result does
    /// not hold the store's count.
    func caughtUp(
        _ live: LocalANNState.Live,
        threads: @autoclosure () -> Int,
        batch: Int
    ) throws -> LocalANNState.Live? {
        guard let index = live.index else { return nil }
        let (ann, vectors) = (try environment.database("ann"), try environment.database("vectors"))
        let log = LocalANNChangeLog(environment: environment)
        let plan = try environment.read { txn -> (UInt64, Int, Bool, [UInt64])? in
            let generation = try txn.get(ann, ANNKey.generation).map(Self.number) ?? 0
            guard let changed = try log.labels(after: live.generation, through: generation, txn) else { return nil }
            var adds: [(label: UInt64, vector: [Float])] = []
            adds.reserveCapacity(min(batch, changed.count))
            var added = false
            var held = 0
            defer { annState.caughtUp(holding: held) }
            var deletes: [UInt64] = []
            for label in changed.sorted() {
                // The record copied from the data file (`pread`), not mapped: a catch-up after a build that ran
                // beside a load reads most of the store.
                if let id = try txn.get(ann, ANNKey.labelPrefix + Self.bytes(label)),
                    let vector = try txn.get(vectors, id, largeValues: .copied)?.withUnsafeBytes({
                        Self.vector(encoded: $0)
                    })
                {
                    adds.append((label, vector))
                    held = max(held, adds.count)
                    if adds.count == batch {
                        try index.add(adds, threads: threads())
                        adds.removeAll(keepingCapacity: true)
                        added = true
                    }
                } else {
                    deletes.append(label)
                }
            }
            if !adds.isEmpty {
                try index.add(adds, threads: threads())
                added = true
            }
            return (generation, try txn.count(vectors), added, deletes)
        }
        guard let plan else { return nil }
        let (generation, count, added, deletes) = plan
        for label in deletes { try index.markDeleted(label) }
        guard index.elementCount - index.deletedCount == count else { return nil }
        return .init(index: index, generation: generation, dirty: live.dirty || added || !deletes.isEmpty)
    }

    // MARK: - Loading a saved graph

    /// Loads the newest saved graph usable at `generation` unless a load or catch-up is under way;
    /// returns whether it was taken. Runs on the searching thread (the first search of a process waits).
    func loadNewerSavedIndex(generation: UInt64, count: Int) -> Bool {
        guard annState.beginBusy() else { return false }
        defer { annState.endBusy() }
        guard let loaded = loadNewestSavedIndex(generation: generation, count: count) else { return false }
        return annState.adopt(loaded)
    }

    /// The newest saved graph newer than the one in memory that can be used at `generation`: its own
    /// generation's, holding `count` live vectors, or an older one that the change log covers. A file that
    /// does not load is not tried again by this process; a file saved later (another name) is.
    func loadNewestSavedIndex(generation: UInt64, count: Int) -> LocalANNState.Live? {
        let held = annState.live.map { $0.index == nil ? 0 : $0.generation + 1 } ?? 0
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path) else { return nil }
        let saved =
            names
            .compactMap { name -> (name: String, generation: UInt64)? in
                Self.savedGeneration(name, nodes: indexSettings.nodes).map { (name, $0) }
            }
            .filter { $0.generation <= generation && $0.generation >= held && !annState.isUnloadable($0.name) }
            .max { $0.generation < $1.generation }
        guard let saved else { return nil }
        if saved.generation < generation {
            let log = LocalANNChangeLog(environment: environment)
            guard (try? environment.read({ try log.covers(after: saved.generation, through: generation, $0) })) == true
            else { return nil }
        }
        guard let dimensions = try? firstVectorDimensions(),
            let index = try? LocalANNIndex(
                loading: directory.appendingPathComponent(saved.name),
                dimensions: dimensions,
                settings: indexSettings
            ),
            saved.generation < generation || index.elementCount - index.deletedCount == count
        else {
            annState.markUnloadable(saved.name)
            return nil
        }
        return .init(index: index, generation: saved.generation, dirty: false)
    }
}
