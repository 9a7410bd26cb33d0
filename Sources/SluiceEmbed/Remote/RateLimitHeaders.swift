import Foundation
import SluiceHTTP

/// Go-style durations as OpenAI sends them in `x-ratelimit-reset-*`: `6m0s`, `1.5s`, `120ms`, `1h2m3s`.
enum GoDuration {
    static func parse(_ text: String) -> Duration? {
        var rest = Substring(text.trimmingCharacters(in: .whitespaces))
        guard !rest.isEmpty else { return nil }
        var total = 0.0
        while !rest.isEmpty {
            let numberEnd = rest.firstIndex { !($0.isNumber || $0 == ".") } ?? rest.endIndex
            guard numberEnd > rest.startIndex, let value = Double(rest[..<numberEnd]) else { return nil }
            rest = rest[numberEnd...]
            let unitEnd = rest.firstIndex { $0.isNumber || $0 == "." } ?? rest.endIndex
            let unit = rest[..<unitEnd]
            rest = rest[unitEnd...]
            switch unit {
            case "h": total += value * 3600
            case "m": total += value * 60
            case "s": total += value
            case "ms": total += value / 1000
            case "us", "µs": total += value / 1_000_000
            case "ns": total += value / 1_000_000_000
            default: return nil
            }
        }
        // An absurd value ("99999999999999999999h") is a day, not an Int64 overflow.
        return HTTPResponse.duration(seconds: total, cap: .seconds(86_400))
    }
}

/// What the `x-ratelimit-*` headers of an answer say about the provider's budget.
struct RateLimitSnapshot: Sendable, Equatable {
    var limitRequests: Int?
    var limitTokens: Int?
    var remainingRequests: Int?
    var remainingTokens: Int?
    var resetRequests: Duration?
    var resetTokens: Duration?

    init(
        limitRequests: Int? = nil,
        limitTokens: Int? = nil,
        remainingRequests: Int? = nil,
        remainingTokens: Int? = nil,
        resetRequests: Duration? = nil,
        resetTokens: Duration? = nil
    ) {
        self.limitRequests = limitRequests
        self.limitTokens = limitTokens
        self.remainingRequests = remainingRequests
        self.remainingTokens = remainingTokens
        self.resetRequests = resetRequests
        self.resetTokens = resetTokens
    }

    init(_ response: HTTPResponse) {
        func int(_ name: String) -> Int? {
            response.header(name).flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        }
        limitRequests = int("x-ratelimit-limit-requests")
        limitTokens = int("x-ratelimit-limit-tokens")
        remainingRequests = int("x-ratelimit-remaining-requests")
        remainingTokens = int("x-ratelimit-remaining-tokens")
        resetRequests = response.header("x-ratelimit-reset-requests").flatMap(GoDuration.parse)
        resetTokens = response.header("x-ratelimit-reset-tokens").flatMap(GoDuration.parse)
    }

    var isEmpty: Bool { self == RateLimitSnapshot() }
}
