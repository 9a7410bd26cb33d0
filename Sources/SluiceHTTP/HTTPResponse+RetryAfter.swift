import Foundation
import SluiceCore

extension HTTPResponse {
    /// The longest pause a `Retry-After` is honoured for unless the caller says otherwise: two minutes.
    /// A server asking for more is retried after the cap (the caller's retry limit still applies).
    package static let defaultRetryAfterCap: Duration = .seconds(120)

    /// How long the answer (a 429 or 503) asks the client to wait: `retry-after-ms` (Azure OpenAI,
    /// OpenAI), else `Retry-After` in seconds or as an HTTP date; nil when it says nothing usable.
    ///
    /// The one place these headers are read: every value is clamped to `0…cap`, so an absurd one
    /// (`1e20`, `inf`, an HTTP date in the year 9999) is a capped pause, never an overflow; a negative
    /// or NaN value counts as none.
    package func retryAfter(cap: Duration = Self.defaultRetryAfterCap, now: Date = Date()) -> Duration? {
        func seconds(_ text: String) -> Double? {
            guard let value = Double(text.trimmingCharacters(in: .whitespaces)), !value.isNaN, value >= 0 else {
                return nil
            }
            return value
        }
        if let milliseconds = header("retry-after-ms").flatMap(seconds) {
            return Self.duration(seconds: milliseconds / 1000, cap: cap)
        }
        guard let value = header("retry-after")?.trimmingCharacters(in: .whitespaces) else { return nil }
        if let delay = seconds(value) { return Self.duration(seconds: delay, cap: cap) }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        if let date = formatter.date(from: value) {
            return Self.duration(seconds: max(0, date.timeIntervalSince(now)), cap: cap)
        }
        return nil
    }

    /// `seconds` (finite or not) as a ``Duration`` no longer than `cap`, in whole milliseconds rounded up.
    package static func duration(seconds: Double, cap: Duration) -> Duration {
        // Not below the cap (inf and NaN included), or beyond what milliseconds in an Int64 can say: the cap.
        guard seconds < min(cap.seconds, 9e12) else { return cap }
        return .milliseconds(Int64(max(0, seconds * 1000).rounded(.up)))
    }
}
