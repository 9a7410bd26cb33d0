import SluiceCore
import Synchronization

/// A ``VectorSink`` in memory, for tests: records every call, can be slowed down or made to fail.
public final class InMemorySink: VectorSink {
    private struct State {
        var records: [VectorID: VectorRecord] = [:]
        var embedder: EmbedderIdentity?
        var upsertCalls = 0
        var failuresLeft = 0
        var finishFailure: String?
    }

    private let state = Mutex(State())
    /// Delay applied to every upsert (a slow sink for backpressure tests).
    public let upsertDelay: Duration

    public init(upsertDelay: Duration = .zero) {
        self.upsertDelay = upsertDelay
    }

    public var name: String { "memory" }

    /// Makes the next `count` upserts fail with ``SluiceError/Code/sinkFailed``.
    public func failNextUpserts(_ count: Int) { state.withLock { $0.failuresLeft = count } }

    /// Makes `finish()` (the end-of-run step: index builds, compaction) fail with `message`.
    public func failFinish(_ message: String) { state.withLock { $0.finishFailure = message } }

    public var records: [VectorRecord] { state.withLock { $0.records.values.sorted { $0.id < $1.id } } }
    public var upsertCalls: Int { state.withLock { $0.upsertCalls } }

    public func prepare(embedder: EmbedderIdentity) async throws {
        try state.withLock {
            if let stored = $0.embedder, stored != embedder, !$0.records.isEmpty {
                throw SluiceError(.embedderMismatch, "memory sink holds \(stored)")
            }
            $0.embedder = embedder
        }
    }

    public func upsert(_ records: [VectorRecord]) async throws {
        if upsertDelay > .zero { try await Task.sleep(for: upsertDelay) }
        try state.withLock {
            $0.upsertCalls += 1
            if $0.failuresLeft > 0 {
                $0.failuresLeft -= 1
                throw SluiceError(.sinkFailed, "injected sink failure")
            }
            for record in records { $0.records[record.id] = record }
        }
    }

    public func delete(_ ids: [VectorID]) async throws {
        state.withLock { for id in ids { $0.records[id] = nil } }
    }

    public func count() async throws -> Int { state.withLock { $0.records.count } }

    public func search(_ vector: [Float], k: Int) async throws -> [SearchHit] {
        let all = records
        return all.map { SearchHit(score: VectorMath.cosine(vector, $0.vector), record: $0) }.sorted {
            $0.score > $1.score
        }.prefix(k).map { $0 }
    }

    public var searchModes: Set<SearchMode> { [.vector, .keyword] }

    /// Vector ranking by cosine; keyword ranking by how many of the query's words a text holds (a fake of
    /// a keyword index); the filter applied before the top k, as stores must.
    public func search(_ request: SearchRequest) async throws -> [SearchHit] {
        let candidates = records.filter { request.filter?.matches($0) ?? true }
        let scored: [SearchHit]
        switch request.mode {
        case .keyword:
            let words = Set(request.text.lowercased().split { !$0.isLetter && !$0.isNumber })
            scored = candidates.compactMap { record in
                let text = Set(record.text.lowercased().split { !$0.isLetter && !$0.isNumber })
                let score = Float(words.intersection(text).count)
                return score > 0 ? SearchHit(score: score, record: record) : nil
            }
        default:
            scored = candidates.map { SearchHit(score: VectorMath.cosine(request.vector, $0.vector), record: $0) }
        }
        return scored.sorted { $0.score != $1.score ? $0.score > $1.score : $0.record.id < $1.record.id }
            .prefix(request.k).map { $0 }
    }

    public func info() async throws -> SinkInfo {
        let embedder = state.withLock { $0.embedder }
        return SinkInfo(
            name: name,
            count: try await count(),
            dimensions: embedder?.dimensions,
            embedder: embedder?.description
        )
    }

    public func exportAll(_ body: @Sendable (VectorRecord) throws -> Void) async throws {
        for record in records { try body(record) }
    }

    public func finish() async throws {
        if let message = state.withLock({ $0.finishFailure }) { throw SluiceError(.sinkFailed, message) }
    }

    public func removeAll() async throws { state.withLock { $0.records.removeAll() } }
}

extension Array where Element == VectorRecord {
    /// The records without `mtime`, for comparing stores built from files written at other moments.
    public var ignoringFileTimes: [VectorRecord] {
        map { record in
            var record = record
            record.metadata["mtime"] = nil
            return record
        }
    }
}
