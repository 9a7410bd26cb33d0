import ArgumentParser
import Foundation
import Logging
import Sluice
import Synchronization

/// `--log-format`: how log lines are written to standard error.
package enum LogFormat: String, ExpressibleByArgument, Sendable {
    /// swift-log's stream format, with control characters escaped (``DisplayEscaping``).
    case text
    /// One JSON object per line (see ``JSONLogLine``).
    case json
}

/// The format every log handler of the process writes in. Set from the command line before the first
/// log line (swift-log's bootstrap happens once per process, so the handler reads it per line).
package enum LogOutput {
    private static let current = Mutex(LogFormat.text)

    package static var format: LogFormat { current.withLock { $0 } }

    package static func configure(format: LogFormat) {
        current.withLock { $0 = format }
        LoggingBootstrap.once()
    }
}

/// The live progress line on a terminal, shared by the progress reporter and the log handler: a log
/// line first clears a drawn progress line (the next report draws it again below), so the two are never
/// glued together. One lock orders the terminal writes.
package enum LiveLine {
    private static let drawn = Mutex(false)

    /// Draws `line` over the current one.
    package static func draw(_ line: String) {
        drawn.withLock { drawn in
            FileHandle.standardError.write(Data("\r\u{1B}[2K\(line)".utf8))
            drawn = true
        }
    }

    /// Draws `line` a last time and ends it with a line break.
    package static func end(_ line: String) {
        drawn.withLock { drawn in
            FileHandle.standardError.write(Data("\r\u{1B}[2K\(line)\n".utf8))
            drawn = false
        }
    }

    /// Runs `write` (a log line) with the live line cleared first, if one is drawn.
    static func clearing(_ write: () -> Void) {
        drawn.withLock { drawn in
            if drawn {
                FileHandle.standardError.write(Data("\r\u{1B}[2K".utf8))
                drawn = false
            }
            write()
        }
    }
}

/// A log event as one JSON object on one line, for log shippers. Keys:
/// - `ts`: the time, ISO 8601 in UTC with milliseconds (`2026-11-25T10:50:25.123Z`)
/// - `level`: `trace`, `debug`, `info`, `notice`, `warning`, `error`, `critical`
/// - `label`: the logger's label (`sluice`)
/// - `message`: the message
/// - then each metadata key, without its `sluice-` prefix and with `-` as `_` (`sluice-run` → `run`,
///   `sluice-eta-s` → `eta_s`); a key that would collide with the four above keeps its full name.
///   Values are strings, except numbers and booleans logged as such (the progress figures) and nested
///   metadata (objects, arrays).
///
/// Keys are written in a fixed order (the four above, then metadata sorted by key). Strings are escaped as
/// JSON requires (`\"`, `\\`, `\n`, `\t`, other C0 controls as `\u00XX`), and DEL and the C1 controls
/// (U+007F–U+009F, which some terminals obey) as `\u00XX` too, so a line is always one line and a file
/// name cannot forge one or drive a terminal. Secrets never reach a log event in the first place (they
/// are redacted where the messages are built), in this format as in text.
enum JSONLogLine {
    static let reserved: Set<String> = ["ts", "level", "label", "message"]

    static func render(
        date: Date,
        level: Logger.Level,
        label: String,
        message: String,
        metadata: Logger.Metadata
    ) -> String {
        var out =
            "{\"ts\":" + quoted(timestamp(date)) + ",\"level\":" + quoted(level.rawValue)
            + ",\"label\":" + quoted(label) + ",\"message\":" + quoted(message)
        for (key, value) in metadata.map({ (name(for: $0.key), $0.value) }).sorted(by: { $0.0 < $1.0 }) {
            out += "," + quoted(key) + ":" + json(value)
        }
        return out + "}"
    }

    /// The JSON key of a metadata key.
    static func name(for key: String) -> String {
        guard key.hasPrefix("sluice-") else { return key }
        let short = String(key.dropFirst("sluice-".count)).replacingOccurrences(of: "-", with: "_")
        return short.isEmpty || reserved.contains(short) ? key : short
    }

    static func json(_ value: Logger.Metadata.Value) -> String {
        switch value {
        case .string(let text): return quoted(text)
        case .stringConvertible(let convertible):
            switch convertible {
            case let number as Int: return String(number)
            case let number as Double where number.isFinite:
                // Whole numbers as integers (`40`, not `40.0`).
                return number == number.rounded() && abs(number) < 1e15 ? String(Int64(number)) : String(number)
            case let flag as Bool: return flag ? "true" : "false"
            default: return quoted(convertible.description)
            }
        case .array(let values): return "[" + values.map(json).joined(separator: ",") + "]"
        case .dictionary(let dictionary):
            return "{"
                + dictionary.sorted { $0.key < $1.key }.map { quoted($0.key) + ":" + json($0.value) }.joined(
                    separator: ","
                ) + "}"
        }
    }

    static func quoted(_ text: String) -> String {
        var out = "\""
        out.reserveCapacity(text.utf8.count + 2)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) {
                    let hex = String(scalar.value, radix: 16, uppercase: false)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }

    static func timestamp(_ date: Date) -> String { MetadataValue.rfc3339(date, milliseconds: true) }
}
