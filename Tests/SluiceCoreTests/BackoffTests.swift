import SluiceCore
import Testing

/// The one exponential backoff with full jitter, shared by the remote embedders and the stores.
@Suite struct BackoffTests {
    @Test func fullJitterUnderAnExponentialCap() {
        let backoff = Backoff(base: .milliseconds(100), cap: .seconds(2))
        #expect(backoff.delay(attempt: 0, unit: 1) == .milliseconds(100))
        #expect(backoff.delay(attempt: 3, unit: 1) == .milliseconds(800))
        #expect(backoff.delay(attempt: 10, unit: 1) == .seconds(2))
        #expect(backoff.delay(attempt: 3, unit: 0.5) == .milliseconds(400))
        #expect(backoff.delay(attempt: 3, unit: 0) == .zero)
    }

    /// Ceilings double from `base` until they reach `cap`, and stay there.
    @Test(arguments: 0..<12)
    func theCeilingDoublesUpToTheCap(attempt: Int) {
        let backoff = Backoff(base: .milliseconds(250), cap: .seconds(30))
        let expected = min(Duration.seconds(30), .milliseconds(250 << attempt))
        #expect(backoff.delay(attempt: attempt, unit: 1) == expected)
    }

    /// Absurd inputs (a huge attempt count, a draw outside [0, 1]) give a delay within [0, cap].
    @Test func absurdInputsStayWithinTheCap() {
        let backoff = Backoff(base: .milliseconds(100), cap: .seconds(10))
        #expect(backoff.delay(attempt: .max, unit: 1) == .seconds(10))
        #expect(backoff.delay(attempt: -3, unit: 1) == .milliseconds(100))
        #expect(backoff.delay(attempt: 2, unit: 7) == .milliseconds(400))
        #expect(backoff.delay(attempt: 2, unit: -1) == .zero)
    }
}
