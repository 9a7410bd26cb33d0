import Synchronization

/// Default implementations, so that sinks that need nothing special (and test fakes) keep conforming.
extension VectorSink {
    public func info() async throws -> SinkInfo {
        SinkInfo(name: name, count: try await count())
    }

    /// Collects the ids from ``exportAll(_:)``.
    public func listIDs() async throws -> Set<VectorID>? {
        let ids = Mutex(Set<VectorID>())
        try await exportAll { record in _ = ids.withLock { $0.insert(record.id) } }
        return ids.withLock { $0 }
    }

    /// Intersects with ``listIDs()``; sinks that can look ids up directly override this.
    public func existing(_ ids: [VectorID]) async throws -> Set<VectorID> {
        guard let all = try await listIDs() else {
            throw SluiceError(.sinkFailed, "\(name) can neither list nor look up ids")
        }
        return Set(ids).intersection(all)
    }

    /// Nil: a store that says nothing about it cannot read vectors back, and a new state embeds again.
    public func storedVectors(ofDocument key: String) async throws -> [VectorID: [Float]]? { nil }

    /// Nil: the store gives no reason beyond answering nil.
    public var readBackRefusal: String? { nil }
    /// Nil: the store skips nothing it cannot read (it fails instead).
    public var readNotice: String? { nil }
    /// None: the store skips nothing it cannot read (it fails instead).
    public func unreadableRecords() async throws -> [UnreadableRecord] { [] }

    public var preparationNotice: String? { nil }

    public func delete(_ ids: [VectorID], documentKeys: [VectorID: String]) async throws {
        try await delete(ids)
    }

    public func drop() async throws { try await removeAll() }

    public func finish() async throws {}

    public var searchModes: Set<SearchMode> { [.vector] }

    public var filterLimits: FilterLimits { .standard }

    public var isRemote: Bool { true }

    public var upkeepFailures: SinkUpkeepFailures { SinkUpkeepFailures() }

    public var embedsText: Bool { false }

    public func checkAvailability() async throws {
        if isRemote { _ = try await info() }
    }

    /// Unfiltered vector search through ``search(_:k:)``; anything else is refused.
    public func search(_ request: SearchRequest) async throws -> [SearchHit] {
        guard request.mode == .vector else {
            throw SluiceError(.usage, "\(name) has no \(request.mode.rawValue) search; use --mode vector")
        }
        if let filter = request.filter {
            throw SluiceError(.usage, "\(name) cannot filter (\(filter)); search without --filter")
        }
        return try await search(request.vector, k: request.k)
    }
}
