import Foundation
import SluiceHTTP
import Testing

@testable import SluiceEmbed

@Suite struct AdaptiveConcurrencyStateMachineTests {
    @Test func increasesAdditivelyAndHalvesOnOverload() {
        var machine = AdaptiveConcurrencyStateMachine(maximum: 16, initial: 4)
        for _ in 0..<4 {
            do {
                let ok = machine.tryAcquire()
                #expect(ok)
            }
        }
        do {
            let ok = machine.tryAcquire()
            #expect(!ok)
        }
        // One round of successes adds about one.
        for _ in 0..<4 { _ = machine.release(.success, now: 0) }
        #expect(machine.limit > 4.9 && machine.limit < 5.1)
        do {
            let ok = machine.tryAcquire()
            #expect(ok)
        }
        _ = machine.release(.overloaded, now: 10)
        #expect(machine.limit == 2)
        // A second overload in the same interval counts once.
        do {
            let ok = machine.tryAcquire()
            #expect(ok)
        }
        _ = machine.release(.overloaded, now: 10.5)
        #expect(machine.limit == 2)
        do {
            let ok = machine.tryAcquire()
            #expect(ok)
        }
        _ = machine.release(.overloaded, now: 11.5)
        #expect(machine.limit == 1)
    }

    @Test func staysWithinBounds() {
        var machine = AdaptiveConcurrencyStateMachine(maximum: 3)
        for _ in 0..<100 {
            do {
                let ok = machine.tryAcquire()
                #expect(ok)
            }
            _ = machine.release(.success, now: 0)
        }
        #expect(machine.limit == 3)
        for step in 0..<10 {
            do {
                let ok = machine.tryAcquire()
                #expect(ok)
            }
            _ = machine.release(.overloaded, now: Double(step * 2))
        }
        #expect(machine.limit == 1)
    }
}

@Suite struct RateLimitHeaderTests {
    @Test(arguments: [
        ("6m0s", 360_000), ("1.5s", 1_500), ("120ms", 120), ("1h2m3s", 3_723_000), ("0s", 0), ("20ms", 20),
    ])
    func goDurations(text: String, milliseconds: Int64) {
        #expect(GoDuration.parse(text) == .milliseconds(milliseconds))
    }

    @Test func badGoDurationIsNil() {
        #expect(GoDuration.parse("soon") == nil)
        #expect(GoDuration.parse("") == nil)
        #expect(GoDuration.parse("5x") == nil)
    }

    @Test func retryAfterPrefersMilliseconds() {
        let both = HTTPResponse(status: 429, headers: ["retry-after-ms": "250", "retry-after": "3"])
        #expect(both.retryAfter() == .milliseconds(250))
        #expect(HTTPResponse(status: 429, headers: ["retry-after": "3"]).retryAfter() == .seconds(3))
        #expect(HTTPResponse(status: 429).retryAfter() == nil)
    }

    @Test(arguments: [
        ["retry-after": "1e20"], ["retry-after": "inf"], ["retry-after": "Infinity"], ["retry-after-ms": "1e30"],
        ["retry-after": "3600"], ["retry-after": "Fri, 31 Dec 9999 23:59:59 GMT"],
    ])
    func absurdRetryAfterIsClampedToTheCap(headers: [String: String]) {
        let response = HTTPResponse(status: 429, headers: headers)
        #expect(response.retryAfter(cap: .seconds(90)) == .seconds(90))
        #expect(response.retryAfter() == HTTPResponse.defaultRetryAfterCap)
    }

    @Test(arguments: ["nan", "-1", "soon", ""])
    func unusableRetryAfterIsNone(value: String) {
        #expect(HTTPResponse(status: 429, headers: ["retry-after": value]).retryAfter() == nil)
        #expect(HTTPResponse(status: 429, headers: ["retry-after-ms": value]).retryAfter() == nil)
    }

    @Test func absurdResetDurationsAreClamped() {
        #expect(GoDuration.parse("99999999999999999999999h") == .seconds(86_400))
    }

    @Test func retryAfterAsHTTPDate() {
        let now = Date(timeIntervalSince1970: 1_700_000_000)  // Tue, 14 Nov 2023 22:13:20 GMT
        let response = HTTPResponse(status: 429, headers: ["retry-after": "Tue, 14 Nov 2023 22:13:25 GMT"])
        #expect(response.retryAfter(now: now) == .seconds(5))
    }

    @Test func snapshotReadsTheHeaders() {
        let response = HTTPResponse(
            status: 200,
            headers: [
                "x-ratelimit-limit-requests": "3000", "x-ratelimit-remaining-requests": "2999",
                "x-ratelimit-limit-tokens": "1000000", "x-ratelimit-remaining-tokens": "999000",
                "x-ratelimit-reset-requests": "20ms", "x-ratelimit-reset-tokens": "6m0s",
            ]
        )
        let snapshot = RateLimitSnapshot(response)
        #expect(snapshot.limitTokens == 1_000_000)
        #expect(snapshot.remainingRequests == 2_999)
        #expect(snapshot.resetTokens == .seconds(360))
    }
}
