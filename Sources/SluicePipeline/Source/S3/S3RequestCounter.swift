import Synchronization

/// The requests an S3 source made: LIST pages, GETs, GetObjectTagging requests and retries (the run's log; the tests' count of a
/// no-op run's requests), and each answered request's latency and body bytes (the stats' `fetch` row).
final class S3RequestCounter: Sendable {
    /// The `fetch` row: one item per answered request, the object bytes downloaded.
    let meter: StageMeter
    private let lists = Atomic<Int>(0)
    private let gets = Atomic<Int>(0)
    private let taggings = Atomic<Int>(0)
    private let retries = Atomic<Int>(0)

    /// - Parameter workers: the downloads in flight at most (`source.s3.concurrency`).
    init(workers: Int) {
        meter = StageMeter(name: "fetch", workers: workers)
    }

    func listed() { lists.add(1, ordering: .relaxed) }
    func fetched() { gets.add(1, ordering: .relaxed) }
    func taggingRead() { taggings.add(1, ordering: .relaxed) }
    func retried() { retries.add(1, ordering: .relaxed) }

    var listRequests: Int { lists.load(ordering: .relaxed) }
    var getRequests: Int { gets.load(ordering: .relaxed) }
    var taggingRequests: Int { taggings.load(ordering: .relaxed) }
    var retriedRequests: Int { retries.load(ordering: .relaxed) }
}
