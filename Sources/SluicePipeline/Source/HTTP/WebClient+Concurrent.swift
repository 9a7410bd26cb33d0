import SluiceCore

extension WebClient {
    /// Runs `body` for each item, `source.http.concurrency` at most at once across hosts, one item per host
    /// at a time, each host's items in order and its requests paced (``HostSchedule``, owned by ``pacer``):
    /// a host waiting for its delay never holds a slot another host could use.
    ///
    /// Calls do not overlap (the pacer's queue is the source's one queue): the listing's crawl and the walk
    /// run one after the other.
    /// - Parameters:
    ///   - host: the host an item's request goes to.
    ///   - cancelled: the result of an item never started because the task was cancelled or the run is
    ///     stopping (``ShutdownSignal/current``).
    /// - Returns: the results, in the items' order.
    func forEachConcurrently<Item: Sendable, Result: Sendable>(
        _ items: [Item],
        host: (Item) -> String,
        cancelled: (Item) -> Result,
        fetch body: @escaping @Sendable (Item) async -> Result
    ) async -> [Result] {
        var results = [Result?](repeating: nil, count: items.count)
        let hosts = items.map(host)
        for (index, host) in hosts.enumerated() { await pacer.enqueue(index, host: host) }
        await withTaskGroup(of: ConcurrentEvent<Result>.self) { group in
            // The earliest timer pending: one more is started only for an earlier moment.
            var timer: ContinuousClock.Instant?
            loop: while true {
                // Cancelled, or the run is stopping (SIGTERM): nothing more is started; what is in flight ends.
                if Task.isCancelled || ShutdownSignal.current?.isRequested == true { _ = await pacer.dropQueued() }
                switch await pacer.next() {
                case .start(let index):
                    let item = items[index]
                    group.addTask { .done(index, await body(item)) }
                    continue loop
                case .sleep(let until):
                    if timer.map({ until < $0 }) ?? true {
                        timer = until
                        group.addTask {
                            try? await Task.sleep(until: until, clock: .continuous)
                            return .timer
                        }
                    }
                case .wait: break
                case .finished: break loop
                }
                guard let event = await group.next() else { break loop }
                switch event {
                case .done(let index, let result):
                    results[index] = result
                    await pacer.finished(host: hosts[index])
                case .timer:
                    timer = nil
                }
            }
            group.cancelAll()
        }
        return zip(items, results).map { $0.1 ?? cancelled($0.0) }
    }
}

/// What a child task of ``WebClient/forEachConcurrently(_:host:cancelled:fetch:)`` reports.
private enum ConcurrentEvent<Result: Sendable>: Sendable {
    case done(Int, Result)
    case timer
}
