import Synchronization

/// The records one search (or one question's searches) skipped because the store could not read them,
/// collected while it runs: the service sets ``current`` around a request, and a store that skips a record
/// notes it here as well as in its ``VectorSink/readNotice``, so the answer says what it left out.
public final class UnreadableRecordLog: Sendable {
    /// The log of the task's search, if the caller set one.
    @TaskLocal public static var current: UnreadableRecordLog?

    private let state = Mutex<(records: [UnreadableRecord], seen: Set<VectorID>)>(([], []))

    /// An empty log.
    public init() {}

    /// Notes `record`, once per id.
    public func note(_ record: UnreadableRecord) {
        state.withLock {
            guard $0.seen.insert(record.id).inserted else { return }
            $0.records.append(record)
        }
    }

    /// The records noted, in the order they were met.
    public var records: [UnreadableRecord] { state.withLock { $0.records } }
}
