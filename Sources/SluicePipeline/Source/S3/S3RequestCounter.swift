import Synchronization

/// The requests an S3 source made: LIST pages, GETs, GetObjectTagging requests and retries (the run's log; the tests' count of a
/// no-op run's requests).
final class S3RequestCounter: Sendable {
    private let lists = Atomic<Int>(0)
    private let gets = Atomic<Int>(0)
    private let taggings = Atomic<Int>(0)
    private let retries = Atomic<Int>(0)

    func listed() { lists.add(1, ordering: .relaxed) }
    func fetched() { gets.add(1, ordering: .relaxed) }
    func taggingRead() { taggings.add(1, ordering: .relaxed) }
    func retried() { retries.add(1, ordering: .relaxed) }

    var listRequests: Int { lists.load(ordering: .relaxed) }
    var getRequests: Int { gets.load(ordering: .relaxed) }
    var taggingRequests: Int { taggings.load(ordering: .relaxed) }
    var retriedRequests: Int { retries.load(ordering: .relaxed) }
}
