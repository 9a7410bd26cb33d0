import Foundation
import Testing

@testable import SluiceCore

/// `MetadataValue.rfc3339` writes its digits itself: the same text as the `String(format:)` it replaced, for
/// every date, with and without milliseconds.
@Suite struct RFC3339FormatTests {
    /// The formatting it replaced.
    static func reference(_ date: Date, milliseconds: Bool) -> String {
        let thousandths = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
        var time = time_t(thousandths >= 0 ? thousandths / 1000 : (thousandths - 999) / 1000)
        var parts = tm()
        gmtime_r(&time, &parts)
        let fraction = milliseconds ? String(format: ".%03d", Int(thousandths - Int64(time) * 1000)) : ""
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d",
            Int(parts.tm_year) + 1900,
            Int(parts.tm_mon) + 1,
            Int(parts.tm_mday),
            Int(parts.tm_hour),
            Int(parts.tm_min),
            Int(parts.tm_sec)
        ) + fraction + "Z"
    }

    @Test("known dates")
    func knownDates() {
        #expect(MetadataValue.rfc3339(Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00Z")
        #expect(
            MetadataValue.rfc3339(Date(timeIntervalSince1970: 1_795_608_000.25), milliseconds: true)
                == "2026-11-25T12:00:00.250Z"
        )
        // Before 1970: the second and the thousandth round down (towards the past).
        #expect(
            MetadataValue.rfc3339(Date(timeIntervalSince1970: -1.5), milliseconds: true) == "1969-12-31T23:59:58.500Z"
        )
        #expect(MetadataValue.rfc3339(Date(timeIntervalSince1970: -62_135_596_800)) == "0001-01-01T00:00:00Z")
    }

    @Test("the same text as String(format:) over years 0–9999 and beyond them")
    func sameAsFormat() {
        var generator = SystemRandomNumberGenerator()
        // Year 0 starts at -62,167,219,200 s; year 10000 at 253,402,300,800 s: a margin on both sides.
        var seconds: [Double] = [
            -62_167_219_200, -62_167_219_200.001, 253_402_300_799.999, 253_402_300_800, -1e11, 3e11,
        ]
        for _ in 0..<5_000 {
            seconds.append(Double.random(in: -63_000_000_000...254_000_000_000, using: &generator))
        }
        for value in seconds {
            let date = Date(timeIntervalSince1970: value)
            for milliseconds in [false, true] {
                #expect(
                    MetadataValue.rfc3339(date, milliseconds: milliseconds)
                        == Self.reference(date, milliseconds: milliseconds),
                    "\(value) \(milliseconds)"
                )
            }
        }
    }
}
