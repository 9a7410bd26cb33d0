import SluiceTesting
import Testing

@testable import SluicePipeline

/// The web source's scheduling decisions without tasks or I/O: time is a ``ManualClock`` instant the test
/// moves; each step is what the owner (``HostPacer``) would do with the action.
@Suite struct HostScheduleTests {
    typealias Instant = ManualClock.Instant
    typealias Schedule = HostSchedule<Instant>

    static func at(_ seconds: Int) -> Instant { Instant(offset: .seconds(seconds)) }

    /// Starts what `next` starts now, each item making its one request (a reservation) as it starts.
    static func startAll(
        _ schedule: inout Schedule,
        hosts: [Int: String],
        delay: Duration,
        now: Instant
    ) -> (
        started: [Int], then: Schedule.Action
    ) {
        var started: [Int] = []
        while true {
            let action = schedule.next(now: now)
            guard case .start(let item) = action else { return (started, action) }
            started.append(item)
            let start = schedule.reserve(host: hosts[item]!, every: delay, now: now)
            #expect(start == now, "an item is started only when its host may be asked at once")
        }
    }

    @Test func manyHostsAreAskedAtOnceUpToTheConcurrency() {
        var schedule = Schedule(concurrency: 3)
        let hosts = [0: "a", 1: "b", 2: "c", 3: "d"]
        for item in 0..<4 { schedule.enqueue(item, host: hosts[item]!) }
        let (started, then) = Self.startAll(&schedule, hosts: hosts, delay: .seconds(10), now: Self.at(0))
        #expect(started == [0, 1, 2])
        #expect(then == .wait, "the fourth host waits for a slot, not for time")
        schedule.finished(host: "b")
        #expect(schedule.next(now: Self.at(1)) == .start(3))
    }

    @Test func oneHostIsAskedOneItemAtATimeAndADelayApart() {
        var schedule = Schedule(concurrency: 4)
        let hosts = [0: "a", 1: "a", 2: "a"]
        for item in 0..<3 { schedule.enqueue(item, host: "a") }
        var (started, then) = Self.startAll(&schedule, hosts: hosts, delay: .seconds(10), now: Self.at(0))
        #expect(started == [0])
        #expect(then == .wait, "one item of a host in flight at a time")
        schedule.finished(host: "a")
        #expect(schedule.next(now: Self.at(2)) == .sleep(until: Self.at(10)), "the delay runs from the last start")
        (started, then) = Self.startAll(&schedule, hosts: hosts, delay: .seconds(10), now: Self.at(10))
        #expect(started == [1])
        schedule.finished(host: "a")
        (started, then) = Self.startAll(&schedule, hosts: hosts, delay: .seconds(10), now: Self.at(25))
        #expect(started == [2], "a host idle past its delay is asked at once")
        schedule.finished(host: "a")
        #expect(schedule.next(now: Self.at(25)) == .finished)
    }

    @Test func aHostWaitingForItsDelayDoesNotHoldBackOthers() {
        // Listing order a, a, a, b, c: with one slot, b and c go while a waits for its delay.
        var schedule = Schedule(concurrency: 1)
        let hosts = [0: "a", 1: "a", 2: "a", 3: "b", 4: "c"]
        for item in 0..<5 { schedule.enqueue(item, host: hosts[item]!) }
        var order: [Int] = []
        var now = Self.at(0)
        var steps = 0
        while steps < 100 {
            steps += 1
            switch schedule.next(now: now) {
            case .start(let item):
                order.append(item)
                _ = schedule.reserve(host: hosts[item]!, every: .seconds(10), now: now)
                now = now.advanced(by: .seconds(1))  // each request takes a second
                schedule.finished(host: hosts[item]!)
            case .sleep(let until):
                #expect(until > now)
                now = until
            case .wait:
                Issue.record("nothing in flight, yet told to wait")
                return
            case .finished:
                steps = 100
            }
        }
        #expect(order == [0, 3, 4, 1, 2])
        #expect(now == Self.at(21), "a's three requests at 0, 10 and 20")
    }

    @Test func everyRequestReservesItsHostRedirectsAndRetriesIncluded() {
        var schedule = Schedule(concurrency: 2)
        #expect(schedule.reserve(host: "a", every: .seconds(5), now: Self.at(0)) == Self.at(0))
        #expect(schedule.reserve(host: "a", every: .seconds(5), now: Self.at(1)) == Self.at(5))
        #expect(schedule.reserve(host: "a", every: .seconds(5), now: Self.at(2)) == Self.at(10))
        #expect(schedule.reserve(host: "b", every: .seconds(5), now: Self.at(2)) == Self.at(2))
        // An item queued for a now while its host is reserved until 15 sleeps until then.
        schedule.enqueue(0, host: "a")
        #expect(schedule.next(now: Self.at(3)) == .sleep(until: Self.at(15)))
        #expect(schedule.next(now: Self.at(15)) == .start(0))
    }

    @Test func droppedItemsAreNeverStarted() {
        var schedule = Schedule(concurrency: 1)
        schedule.enqueue(0, host: "a")
        schedule.enqueue(1, host: "b")
        #expect(schedule.next(now: Self.at(0)) == .start(0))
        #expect(schedule.dropQueued() == [1])
        #expect(schedule.next(now: Self.at(0)) == .wait)
        schedule.finished(host: "a")
        #expect(schedule.next(now: Self.at(0)) == .finished)
    }
}
