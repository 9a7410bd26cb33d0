/// The owner of the web source's ``HostSchedule``: the politeness delay (requests to one host start at
/// least `every` apart — `source.http.delay_seconds`, or the robots.txt `Crawl-delay` — whoever asks) and
/// which queued item starts next (``WebClient/forEachConcurrently(_:host:cancelled:fetch:)``). Each request reserves the
/// next free moment of its host, then sleeps until it outside the actor, so that callers of different hosts
/// never wait for each other.
actor HostPacer {
    private var schedule: HostSchedule<ContinuousClock.Instant>

    init(concurrency: Int = 1) { schedule = HostSchedule(concurrency: concurrency) }

    /// Waits for the host's next turn.
    /// - Throws: `CancellationError` when the task is cancelled while it waits.
    nonisolated func wait(host: String, every delay: Duration) async throws {
        let start = await reserve(host: host, every: delay)
        if start > .now { try await Task.sleep(until: start, clock: .continuous) }
    }

    /// The host's next free moment, reserved for the caller.
    func reserve(host: String, every delay: Duration) -> ContinuousClock.Instant {
        schedule.reserve(host: host, every: delay, now: .now)
    }

    func enqueue(_ item: Int, host: String) { schedule.enqueue(item, host: host) }

    func next() -> HostSchedule<ContinuousClock.Instant>.Action { schedule.next(now: .now) }

    func finished(host: String) { schedule.finished(host: host) }

    func dropQueued() -> [Int] { schedule.dropQueued() }
}

/// Each origin's robots.txt, fetched once a run (a failure too: the origin's URLs fail alike).
actor RobotsCache {
    private var known: [String: Result<RobotsRules, any Error>] = [:]
    private var pending: [String: Task<RobotsRules, any Error>] = [:]

    func rules(
        for origin: String,
        fetch: @escaping @Sendable () async throws -> RobotsRules
    ) async throws -> RobotsRules {
        if let result = known[origin] { return try result.get() }
        let task = pending[origin] ?? Task { try await fetch() }
        pending[origin] = task
        let result = await task.result
        known[origin] = result
        pending[origin] = nil
        return try result.get()
    }
}
