import Foundation
import SluiceCore
import Synchronization

/// Vectors as JSON lines, for piping into anything else: one file (`sink.path` ending in `.jsonl`) or a
/// folder of `shards` files (`part-00000.jsonl`, … ; a record's shard follows from its id).
///
/// Each line is one record exactly as `sluice export` writes it (id, document key, ordinal, text,
/// metadata, vector; keys sorted), and the files are sorted by id.
///
/// Idempotent by rewriting: during a run every upsert, delete and clear is appended to a journal
/// (`<path>.journal`, or `journal.jsonl` in the folder) and fsynced before it is acknowledged; at the end
/// of the run (``finish()``) the data files are rewritten from the journal applied to them (each written
/// to a temporary file, fsynced and renamed into place) and the journal is removed. A crash leaves the
/// journal, which the next open replays, so the end state equals an uninterrupted run's. Readers
/// (`export`, `search`, `sink info`) also apply a journal they find. The store is held in memory while
/// it is open (about the size of its files).
public final class JSONLSink: VectorSink {
    struct State {
        var lines: [VectorID: Data] = [:]
        var embedder: String?
        var dirty = false
    }

    let layout: Layout
    let readOnly: Bool
    /// Held by a writable store (``WriteLock``); nil for a reader.
    let writeLock: WriteLock?
    let state = Mutex(State())
    let executor = BlockingExecutor(label: "sl-jsonl-sink", threads: 1)
    /// Document key → ids, built when a new state first asks for a document's vectors (`JSONLSink+Adoption.swift`).
    let documentKeys = DocumentKeyIndex()

    public var name: String { "jsonl:\(layout.root.path)" }

    /// Files on this machine, opened when the sink was built: nothing to check before a run.
    public var isRemote: Bool { false }

    public func checkAvailability() async throws {}

    /// Opens the store at `path` (created on first write), replaying a journal left by a crashed run.
    public init(path: URL, shards: Int, readOnly: Bool = false) throws {
        layout = Layout(path: path, shards: shards)
        self.readOnly = readOnly
        // Before the files are read: a second writer stops here (exit 3), not after working on its own copy.
        writeLock = readOnly ? nil : try WriteLock(layout)
        let loaded = try layout.load()
        state.withLock {
            $0.lines = loaded.lines
            $0.embedder = loaded.embedder
            $0.dirty = loaded.journalFound
        }
    }

    deinit { executor.shutdown() }

    public func prepare(embedder: EmbedderIdentity) async throws {
        let current = state.withLock { ($0.embedder, $0.lines.count) }
        if let stored = current.0, stored != embedder.description, current.1 > 0 {
            throw SluiceError(
                .embedderMismatch,
                "the JSONL store at \(layout.root.path) holds vectors of \(stored), not \(embedder); re-embed everything with --reembed or use another sink path"
            )
        }
        guard current.0 != embedder.description else { return }
        let layout = self.layout
        try await executor.run { try layout.writeMeta(embedder: embedder) }
        state.withLock { $0.embedder = embedder.description }
    }

    public func upsert(_ records: [VectorRecord]) async throws {
        guard !records.isEmpty else { return }
        let encoded = try records.map { ($0.id, try JSONLSink.encode($0)) }
        // Journal and memory change together on the sink's one thread, so concurrent writers cannot
        // apply them in different orders.
        try await executor.run { [self] in
            try layout.appendJournal(encoded.map { JSONLSink.journalLine(upsert: $0.1) })
            state.withLock {
                for (id, line) in encoded { $0.lines[id] = line }
                $0.dirty = true
            }
            documentKeys.upserted(records)
        }
    }

    public func delete(_ ids: [VectorID]) async throws {
        guard !ids.isEmpty else { return }
        let line = try JSONLSink.journalLine(delete: ids)
        try await executor.run { [self] in
            try layout.appendJournal([line])
            state.withLock {
                for id in ids { $0.lines[id] = nil }
                $0.dirty = true
            }
            documentKeys.deleted(ids)
        }
    }

    public func count() async throws -> Int { state.withLock { $0.lines.count } }

    public func search(_ vector: [Float], k: Int) async throws -> [SearchHit] {
        try await search(SearchRequest(vector: vector, k: k))
    }

    /// The best `k` by cosine among the records that match the filter, by a scan of every record (the
    /// filter is evaluated as it scans, as the local store does). The scan stops once its task is
    /// cancelled (a request's deadline).
    public func search(_ request: SearchRequest) async throws -> [SearchHit] {
        try request.requireVectorMode(name)
        let (vector, k) = (request.vector, request.k)
        let lines = state.withLock { $0.lines }
        let decoder = JSONDecoder()
        var best: [SearchHit] = []
        for (scanned, (_, line)) in lines.enumerated() {
            if scanned % LocalSink.cancellationInterval == 0 { try Task.checkCancellation() }
            let record = try decoder.decode(VectorRecord.self, from: line)
            guard request.filter?.matches(record) ?? true else { continue }
            let hit = SearchHit(score: VectorMath.cosine(vector, record.vector), record: record)
            let index = best.firstIndex { $0.score < hit.score } ?? best.count
            if index < k {
                best.insert(hit, at: index)
                if best.count > k { best.removeLast() }
            }
        }
        return best
    }

    public func exportAll(_ body: @Sendable (VectorRecord) throws -> Void) async throws {
        let lines = state.withLock { $0.lines }
        let decoder = JSONDecoder()
        for id in lines.keys.sorted() { try body(try decoder.decode(VectorRecord.self, from: lines[id]!)) }
    }

    public func listIDs() async throws -> Set<VectorID>? { state.withLock { Set($0.lines.keys) } }

    public func existing(_ ids: [VectorID]) async throws -> Set<VectorID> {
        state.withLock { lines in Set(ids.filter { lines.lines[$0] != nil }) }
    }

    public func removeAll() async throws {
        let line = try JSONLSink.journalLine(clear: ())
        try await executor.run { [self] in
            try layout.appendJournal([line])
            state.withLock {
                $0.lines.removeAll()
                $0.dirty = true
            }
            documentKeys.cleared()
        }
    }

    public func info() async throws -> SinkInfo {
        let (count, embedder) = state.withLock { ($0.lines.count, $0.embedder) }
        let dimensions = embedder.flatMap { $0.split(separator: "@").last.flatMap { Int($0) } }
        return SinkInfo(
            name: name,
            exists: FileManager.default.fileExists(atPath: layout.root.path),
            count: count,
            dimensions: dimensions,
            metric: "cosine (exact, in sluice search)",
            embedder: embedder,
            details: ["files": layout.dataFiles.map(\.lastPathComponent).joined(separator: ", ")]
        )
    }

    public func drop() async throws {
        let layout = self.layout
        try await executor.run { try layout.removeFiles() }
        state.withLock { $0 = State() }
        documentKeys.cleared()
    }

    /// Rewrites the data files from memory (sorted by id) and removes the journal.
    public func finish() async throws {
        guard !readOnly else { return }
        try await executor.run { [self] in
            let (lines, dirty) = state.withLock { ($0.lines, $0.dirty) }
            guard dirty else { return }
            try layout.rewrite(lines)
            state.withLock { $0.dirty = false }
        }
    }
}

extension JSONLSink {
    static func journalLine(upsert line: Data) -> Data {
        Data("{\"op\":\"upsert\",\"record\":".utf8) + line + Data("}".utf8)
    }

    static func journalLine(delete ids: [VectorID]) throws -> Data {
        try JSONEncoder().encode(JournalEntry(op: "delete", ids: ids))
    }

    static func journalLine(clear: Void) throws -> Data {
        try JSONEncoder().encode(JournalEntry(op: "clear"))
    }

    /// One journal line as read back (upserts carry the record).
    struct JournalEntry: Codable {
        var op: String
        var ids: [VectorID]? = nil
        var record: VectorRecord? = nil
    }
}
