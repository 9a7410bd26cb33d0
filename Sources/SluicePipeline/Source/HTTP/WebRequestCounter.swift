import Synchronization

/// The requests a web source made: GETs of pages and sitemaps, the 304s among them, robots.txt fetches,
/// retries, the URLs robots.txt disallowed (the run's log; the tests' count of a no-op run's requests), and
/// whether any server answered at all (the rule for an unreachable source, ``WebSource``); and each answered
/// request's latency and the bytes of body it read (the stats' `fetch` row).
final class WebRequestCounter: Sendable {
    /// The `fetch` row: one item per answered request (pages, sitemaps, robots.txt), the bytes of the pages
    /// downloaded.
    let meter: StageMeter
    private let gets = Atomic<Int>(0)
    private let notModifieds = Atomic<Int>(0)
    private let robots = Atomic<Int>(0)
    private let retries = Atomic<Int>(0)
    private let refusals = Atomic<Int>(0)
    private let answers = Atomic<Int>(0)

    /// - Parameter workers: the requests in flight at most (`source.http.concurrency`).
    init(workers: Int) {
        meter = StageMeter(name: "fetch", workers: workers)
    }

    func fetched() { gets.add(1, ordering: .relaxed) }
    func notModified() { notModifieds.add(1, ordering: .relaxed) }
    func fetchedRobots() { robots.add(1, ordering: .relaxed) }
    func retried() { retries.add(1, ordering: .relaxed) }
    func disallowed() { refusals.add(1, ordering: .relaxed) }
    /// A server answered (any status): the source is reachable.
    func answered() { answers.add(1, ordering: .relaxed) }

    /// Whether any request of the run got an answer (robots.txt, a sitemap, a page; any status).
    var anyAnswered: Bool { answers.load(ordering: .relaxed) > 0 }

    var summary: String {
        let get = gets.load(ordering: .relaxed)
        let notModified = notModifieds.load(ordering: .relaxed)
        return "\(get) GET (\(notModified) not modified), \(robots.load(ordering: .relaxed)) robots.txt, "
            + "\(retries.load(ordering: .relaxed)) retried, \(refusals.load(ordering: .relaxed)) disallowed by robots.txt"
    }
}
