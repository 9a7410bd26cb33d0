/// Which web request starts next, and when: the decisions of the web source's fetching, as a pure state
/// machine (no tasks, no clock of its own: each call is given `now`), owned by ``HostPacer``.
///
/// Two rules, whatever the number of hosts:
/// - **Politeness**: two requests to one host start at least its delay apart (``reserve(host:every:now:)``:
///   each request, robots.txt, redirects and retries included, reserves its host's next free moment), and a
///   host has one item in flight at a time.
/// - **Concurrency**: at most `concurrency` items are in flight across hosts, and a free slot goes to the
///   first queued item whose host is free now, so a host that must wait never holds back the others
///   (``next(now:)``).
///
/// Items are numbered by the caller; within a host they start in the order queued.
struct HostSchedule<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration, Instant: Sendable {
    /// What the owner does next.
    enum Action: Equatable, Sendable {
        /// Start the item (its host is now busy until ``finished(host:)``).
        case start(Int)
        /// Nothing can start before this moment (every host with queued items waits for its delay); an
        /// item that finishes earlier may free a slot or a host sooner.
        case sleep(until: Instant)
        /// Nothing can start until an item in flight finishes.
        case wait
        /// Nothing is queued and nothing is in flight.
        case finished
    }

    let concurrency: Int
    /// Queued items per host, in order.
    private var queued: [String: [Int]] = [:]
    /// Hosts with queued items, in the order they first had one (a stable, fair scan).
    private var hosts: [String] = []
    private var busy: Set<String> = []
    private var inFlight = 0
    /// Each host's next free moment (the last reservation plus its delay).
    private var nextFree: [String: Instant] = [:]

    init(concurrency: Int) { self.concurrency = max(1, concurrency) }

    /// Items queued and not started.
    var pending: Int { queued.values.reduce(0) { $0 + $1.count } }

    mutating func enqueue(_ item: Int, host: String) {
        if queued[host, default: []].isEmpty, !hosts.contains(host) { hosts.append(host) }
        queued[host, default: []].append(item)
    }

    /// The next action at `now`.
    mutating func next(now: Instant) -> Action {
        if hosts.isEmpty { return inFlight == 0 ? .finished : .wait }
        guard inFlight < concurrency else { return .wait }
        var earliest: Instant?
        for (index, host) in hosts.enumerated() where !busy.contains(host) {
            if let free = nextFree[host], free > now {
                earliest = earliest.map { min($0, free) } ?? free
                continue
            }
            let item = queued[host]!.removeFirst()
            if queued[host]!.isEmpty {
                queued[host] = nil
                hosts.remove(at: index)
            }
            busy.insert(host)
            inFlight += 1
            return .start(item)
        }
        if let earliest { return .sleep(until: earliest) }
        return .wait
    }

    /// The item of `host` started by ``next(now:)`` is done: its host and its slot are free.
    mutating func finished(host: String) {
        guard busy.remove(host) != nil else { return }
        inFlight -= 1
    }

    /// One request to `host` is about to be made: returns when it may start (`now`, or the host's next
    /// free moment) and reserves that moment, so that the next request to the host starts `delay` later.
    mutating func reserve(host: String, every delay: Duration, now: Instant) -> Instant {
        let start = max(now, nextFree[host] ?? now)
        nextFree[host] = start.advanced(by: delay)
        return start
    }
}

extension HostSchedule {
    /// Drops every queued item (the caller was cancelled): returns them, in no particular order.
    mutating func dropQueued() -> [Int] {
        let items = queued.values.flatMap { $0 }
        queued = [:]
        hosts = []
        return items
    }
}
