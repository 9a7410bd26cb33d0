import Foundation

/// The keys a decoding read, with their full paths (for ``PipelineConfiguration/decodableKeys``), the keys
/// the file set, and the notices it gave (deprecated keys).
final class KeyLog {
    var keys: Set<String> = []
    /// The keys present in the file and its overrides (sections too), with their full paths.
    var present: Set<String> = []
    /// One line per deprecated key used, naming the key to use instead.
    var notices: [String] = []
}

/// A mapping of a pipeline file being read (one section, or the whole file): typed accessors with the key path in every error, and unknown-key detection.
struct ConfigurationSection {
    var values: [String: Any]
    var path: String
    var seen: Set<String> = []
    let log: KeyLog?

    init(_ values: [String: Any], path: String, log: KeyLog? = nil) {
        self.values = values
        self.path = path
        self.log = log
    }

    private func name(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    private mutating func take(_ key: String) -> Any? {
        seen.insert(key)
        guard let value = values[key], !(value is NSNull) else { return nil }
        return value
    }

    mutating func section(_ key: String) throws -> ConfigurationSection? {
        guard let value = take(key) else { return nil }
        guard let dict = value as? [String: Any] else {
            throw SluiceError(.configuration, "\(name(key)): expected a mapping")
        }
        return ConfigurationSection(dict, path: name(key), log: log)
    }

    mutating func string(_ key: String, oneOf allowed: [String]? = nil) throws -> String? {
        guard let value = take(key) else { return nil }
        let text: String
        switch value {
        case let s as String: text = s
        case let i as Int: text = String(i)
        case let d as Double: text = String(d)
        case let date as Date:
            // YAML reads an unquoted 2024-02-01 (an Azure api-version) as a timestamp: give the text back.
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "UTC")
            formatter.dateFormat = "yyyy-MM-dd"
            text = formatter.string(from: date)
        default: throw SluiceError(.configuration, "\(name(key)): expected a string")
        }
        if let allowed, !allowed.contains(text) {
            throw SluiceError(
                .configuration,
                "\(name(key)): '\(text)' is not supported (expected one of: \(allowed.joined(separator: ", ")))"
            )
        }
        return text
    }

    /// One of the cases of a closed set of choices, by its raw value.
    mutating func choice<Choice: RawRepresentable & CaseIterable>(
        _ key: String,
        of type: Choice.Type = Choice.self
    ) throws -> Choice?
    where Choice.RawValue == String {
        try string(key, oneOf: Choice.allCases.map(\.rawValue)).flatMap(Choice.init(rawValue:))
    }

    /// A path: a string that is not empty (an empty one would name the pipeline file's own folder).
    mutating func path(_ key: String) throws -> String? {
        guard let text = try string(key) else { return nil }
        guard !text.allSatisfy(\.isWhitespace) else {
            throw SluiceError(.configuration, "\(name(key)): expected a path, got an empty string")
        }
        return text
    }

    mutating func strings(_ key: String) throws -> [String]? {
        guard let value = take(key) else { return nil }
        if let single = value as? String { return [single] }
        guard let list = value as? [Any], let strings = list as? [String] else {
            throw SluiceError(.configuration, "\(name(key)): expected a list of strings")
        }
        return strings
    }

    /// A mapping of names to names (`{access: readers}`): every value a non-empty string.
    mutating func nameMapping(_ key: String) throws -> [String: String]? {
        guard let value = take(key) else { return nil }
        guard let mapping = value as? [String: Any] else {
            throw SluiceError(.configuration, "\(name(key)): expected a mapping of names to names")
        }
        return try mapping.mapValues { item in
            guard let text = item as? String, !text.trimmingCharacters(in: .whitespaces).isEmpty else {
                throw SluiceError(.configuration, "\(name(key)): every value must be a name (a non-empty string)")
            }
            return text
        }
    }

    /// A mapping of names to metadata values: strings, numbers, booleans, dates and lists of strings.
    mutating func metadataValues(_ key: String) throws -> [String: MetadataValue]? {
        guard let value = take(key) else { return nil }
        guard let mapping = value as? [String: Any] else {
            throw SluiceError(.configuration, "\(name(key)): expected a mapping of names to values")
        }
        return try mapping.mapValues { item in
            guard let typed = MetadataValue(json: item) else {
                throw SluiceError(
                    .configuration,
                    "\(name(key)): values must be strings, numbers, booleans, dates or lists of strings"
                )
            }
            return typed
        }
    }

    /// A deprecated whole-number key, still read: when it is set, one notice names `replacement` and how
    /// the old value maps to it (`meaning`), and `convert` turns the old value into the new key's.
    mutating func deprecatedInt(
        _ key: String,
        min: Int,
        max: Int? = nil,
        replacement: String,
        meaning: String,
        convert: (Int) -> Int
    ) throws -> Int? {
        guard let value = try int(key, min: min, max: max) else { return nil }
        log?.notices.append(
            "\(name(key)) is deprecated: use \(replacement) (\(meaning)); \(name(key)): \(value) reads as \(replacement): \(convert(value))"
        )
        return convert(value)
    }

    mutating func bool(_ key: String) throws -> Bool? {
        guard let value = take(key) else { return nil }
        if let b = value as? Bool { return b }
        if let s = value as? String, ["true", "false"].contains(s.lowercased()) { return s.lowercased() == "true" }
        throw SluiceError(.configuration, "\(name(key)): expected true or false")
    }

    /// Whether `key` holds the word `auto` (then taken; a number or nothing is left for the caller).
    mutating func isAuto(_ key: String) throws -> Bool {
        guard (values[key] as? String)?.lowercased() == "auto" else { return false }
        _ = take(key)
        return true
    }

    mutating func int(_ key: String, min: Int, max: Int? = nil) throws -> Int? {
        guard let value = take(key) else { return nil }
        var number: Int?
        if let i = value as? Int { number = i }
        if let s = value as? String { number = Int(s) }
        guard let number else { throw SluiceError(.configuration, "\(name(key)): expected a whole number") }
        return try inRange(key, number, min: min, max: max)
    }

    /// A key that may hold either a scalar (returned, and checked against `allowed`) or a mapping (left
    /// for ``section(_:)``, and nil returned).
    mutating func scalarString(_ key: String, oneOf allowed: [String]) throws -> String? {
        guard let value = values[key], !(value is [String: Any]) else { return nil }
        return try string(key, oneOf: allowed)
    }

    /// A number of at least `min` and, when given, at most `max` (a key with a meaning past which values
    /// are mistakes: a timeout of 1e30 seconds, a share of 2). NaN is refused as below `min`.
    mutating func number(_ key: String, min: Double, max: Double? = nil) throws -> Double? {
        guard let value = take(key) else { return nil }
        var number: Double?
        if let d = value as? Double { number = d }
        if let i = value as? Int { number = Double(i) }
        if let s = value as? String { number = Double(s) }
        guard let number else { throw SluiceError(.configuration, "\(name(key)): expected a number") }
        return try inRange(key, number, min: min, max: max)
    }

    /// `value` when it lies within the bounds; otherwise an error naming the key and the bound.
    private func inRange<T: Comparable>(_ key: String, _ value: T, min: T, max: T?) throws -> T {
        guard value >= min else {
            throw SluiceError(.configuration, "\(name(key)): must be at least \(min), got \(value)")
        }
        if let max, value > max {
            throw SluiceError(.configuration, "\(name(key)): must be at most \(max), got \(value)")
        }
        return value
    }

    /// Records that the key `old` of this section, which the file used, is deprecated in favour of `new` (a
    /// full dotted key): one notice for the user (stderr, `sluice check`), and the value is read as before.
    func deprecated(_ old: String, use new: String) {
        guard values[old] != nil else { return }
        log?.notices.append("\(name(old)) is deprecated: use \(new) (it means the same; the old key still works)")
    }

    func finish() throws {
        log?.keys.formUnion(seen.map { name($0) })
        log?.present.formUnion(values.keys.map { name($0) })
        let unknown = Set(values.keys).subtracting(seen).sorted()
        if !unknown.isEmpty {
            let known = seen.sorted().map { name($0) }.joined(separator: ", ")
            throw SluiceError(
                .configuration,
                "unknown key \(unknown.map { name($0) }.joined(separator: ", ")) (known here: \(known))"
            )
        }
    }
}
