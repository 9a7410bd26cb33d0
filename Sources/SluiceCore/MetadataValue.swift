import Foundation

/// A typed metadata value of a stored record: what filters compare and results carry.
///
/// In JSON (Sluice's own output, the JSONL sink, pgvector's `jsonb`, Qdrant's payload) a value is the
/// natural JSON value; a time is an RFC 3339 string in UTC (`2026-11-25T12:00:00Z`), which sorts as text
/// in time order and is read back as a time. Stores that compare only numbers (Pinecone, Chroma) hold
/// times as Unix seconds (``numericTimes``).
public enum MetadataValue: Sendable, Hashable {
    case string(String)
    case int(Int)
    case double(Double)
    case bool(Bool)
    /// A point in time, kept to the second.
    case time(Date)
    case strings([String])

    /// The value as plain text, for display and for stores that keep only strings.
    public var text: String {
        switch self {
        case .string(let value): return value
        case .int(let value): return String(value)
        case .double(let value): return String(value)
        case .bool(let value): return String(value)
        case .time(let value): return MetadataValue.rfc3339(value)
        case .strings(let values): return values.joined(separator: ", ")
        }
    }

    /// Whether the value carries nothing (an empty string or list); stores leave such keys out.
    public var isEmpty: Bool {
        switch self {
        case .string(let value): return value.isEmpty
        case .strings(let values): return values.isEmpty
        default: return false
        }
    }

    /// The value with a time as Unix seconds, for stores whose filters compare only numbers.
    public var numericTimes: MetadataValue {
        if case .time(let date) = self { return .int(Int(date.timeIntervalSince1970.rounded(.down))) }
        return self
    }

    /// The number the value stands for, when it is one (a time counts in Unix seconds).
    public var number: Double? {
        switch self {
        case .int(let value): return Double(value)
        case .double(let value): return value
        case .time(let value): return value.timeIntervalSince1970.rounded(.down)
        default: return nil
        }
    }

    /// The value as a time: a time, or a string in RFC 3339 form.
    public var date: Date? {
        switch self {
        case .time(let value): return value
        case .string(let value): return MetadataValue.parseTime(value)
        default: return nil
        }
    }

    /// A value read from JSON (`JSONSerialization`'s objects) or YAML (Yams' Swift values and dates):
    /// nil for null, mappings and lists of anything but strings.
    public init?(json: Any) {
        switch json {
        case let value as Date: self = .time(value)
        case let value as String:
            self = MetadataValue.parseTime(value).map(MetadataValue.time) ?? .string(value)
        case let value as NSNumber:
            // JSONSerialization's numbers say what they were: "c" a boolean, "d"/"f" a number with a fraction.
            switch String(cString: value.objCType) {
            case "c", "B": self = .bool(value.boolValue)
            case "d", "f":
                guard value.doubleValue.isFinite else { return nil }
                self = .double(value.doubleValue)
            default: self = .int(value.intValue)
            }
        case let values as [Any]:
            let strings = values.compactMap { $0 as? String }
            guard strings.count == values.count else { return nil }
            self = .strings(strings)
        default:
            return nil
        }
    }

    /// The value for `JSONSerialization`.
    public var jsonObject: Any {
        switch self {
        case .string(let value): return value
        case .int(let value): return value
        case .double(let value): return value
        case .bool(let value): return value
        case .time: return text
        case .strings(let values): return values
        }
    }

    /// `2026-11-25T12:00:00Z`: UTC, whole seconds (or milliseconds: `…:00.250Z`), so that text order is
    /// time order.
    ///
    /// Written digit by digit (years 0–9999; `String(format:)` outside them): it is every record's modified
    /// time in the JSONL file and in the stores behind a server, and `String(format:)`'s variadic arguments
    /// cost dynamic casts per number (3% of a latency-bound load into JSONL, session 51).
    public static func rfc3339(_ date: Date, milliseconds: Bool = false) -> String {
        let thousandths = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
        var time = time_t(thousandths >= 0 ? thousandths / 1000 : (thousandths - 999) / 1000)
        var parts = tm()
        gmtime_r(&time, &parts)
        let year = Int(parts.tm_year) + 1900
        let fraction = Int(thousandths - Int64(time) * 1000)
        guard (0...9999).contains(year) else {
            return String(
                format: "%04d-%02d-%02dT%02d:%02d:%02d",
                year,
                Int(parts.tm_mon) + 1,
                Int(parts.tm_mday),
                Int(parts.tm_hour),
                Int(parts.tm_min),
                Int(parts.tm_sec)
            ) + (milliseconds ? String(format: ".%03d", fraction) : "") + "Z"
        }
        return String(unsafeUninitializedCapacity: milliseconds ? 24 : 20) { buffer in
            var at = 0
            func put(_ value: Int, digits: Int) {
                var rest = value
                for place in stride(from: at + digits - 1, through: at, by: -1) {
                    buffer[place] = UInt8(ascii: "0") + UInt8(rest % 10)
                    rest /= 10
                }
                at += digits
            }
            func put(_ byte: UInt8) {
                buffer[at] = byte
                at += 1
            }
            put(year, digits: 4)
            put(UInt8(ascii: "-"))
            put(Int(parts.tm_mon) + 1, digits: 2)
            put(UInt8(ascii: "-"))
            put(Int(parts.tm_mday), digits: 2)
            put(UInt8(ascii: "T"))
            put(Int(parts.tm_hour), digits: 2)
            put(UInt8(ascii: ":"))
            put(Int(parts.tm_min), digits: 2)
            put(UInt8(ascii: ":"))
            put(Int(parts.tm_sec), digits: 2)
            if milliseconds {
                put(UInt8(ascii: "."))
                put(fraction, digits: 3)
            }
            put(UInt8(ascii: "Z"))
            return at
        }
    }

    /// Parses `YYYY-MM-DDTHH:MM:SSZ` (with optional fractional seconds, or a `±HH:MM` offset);
    /// nil for anything else, so that ordinary strings stay strings.
    public static func parseTime(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        guard bytes.count >= 20, bytes.count <= 35, bytes[4] == 0x2D, bytes[7] == 0x2D, bytes[10] == 0x54,
            bytes[13] == 0x3A, bytes[16] == 0x3A
        else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for index in range {
                guard bytes[index] >= 0x30, bytes[index] <= 0x39 else { return nil }
                value = value * 10 + Int(bytes[index] - 0x30)
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
            let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
            (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        // A day the month does not have (2026-02-30) is not a time: `timegm` would roll it into the next month.
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let monthDays = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        guard day <= monthDays[month - 1] else { return nil }
        var index = 19
        var fraction = 0.0
        if bytes[index] == 0x2E {
            var scale = 0.1
            index += 1
            let start = index
            while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 {
                fraction += Double(bytes[index] - 0x30) * scale
                scale /= 10
                index += 1
            }
            guard index > start else { return nil }
        }
        var offset = 0
        if index == bytes.count - 1, bytes[index] == 0x5A {
            offset = 0
        } else if index == bytes.count - 6, bytes[index] == 0x2B || bytes[index] == 0x2D, bytes[index + 3] == 0x3A,
            let hours = number(index + 1..<index + 3), let minutes = number(index + 4..<index + 6)
        {
            offset = (hours * 3600 + minutes * 60) * (bytes[index] == 0x2D ? -1 : 1)
        } else {
            return nil
        }
        var parts = tm()
        parts.tm_year = Int32(year - 1900)
        parts.tm_mon = Int32(month - 1)
        parts.tm_mday = Int32(day)
        parts.tm_hour = Int32(hour)
        parts.tm_min = Int32(minute)
        parts.tm_sec = Int32(second)
        let seconds = timegm(&parts)
        return Date(timeIntervalSince1970: Double(seconds - offset) + fraction)
    }
}

extension MetadataValue: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int.self) {
            self = .int(value)
        } else if let value = try? container.decode(Double.self) {
            self = .double(value)
        } else if let values = try? container.decode([String].self) {
            self = .strings(values)
        } else {
            let value = try container.decode(String.self)
            self = MetadataValue.parseTime(value).map(MetadataValue.time) ?? .string(value)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let value): try container.encode(value)
        case .int(let value): try container.encode(value)
        case .double(let value): try container.encode(value)
        case .bool(let value): try container.encode(value)
        case .time: try container.encode(text)
        case .strings(let values): try container.encode(values)
        }
    }
}

extension MetadataValue: CustomStringConvertible {
    public var description: String { text }
}

extension MetadataValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByFloatLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int) { self = .int(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
}

extension MetadataValue {
    /// The value as a whole number: an integer, an integral float, or a string of digits.
    public var integer: Int? {
        switch self {
        case .int(let value): return value
        case .double(let value): return Int(exactly: value)
        case .string(let value): return Int(value)
        default: return nil
        }
    }
}
