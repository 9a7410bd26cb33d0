import Foundation

/// A condition on a record's metadata, written once (`page >= 3 and format = pdf`) and pushed down to each
/// store's own filtering (docs/DESIGN.md §10). A store that cannot express a filter refuses it.
///
/// Fields are metadata keys, plus `document_key` (the record's document) and `ordinal` (the record's
/// position in its document). On a list field (such as `headings` or `folders`), `=` and `in` match when
/// any element matches, and `!=` when none does.
///
/// Text compares by its exact bytes (UTF-8), in every store: `é` written as one scalar (NFC) and as `e`
/// and a combining accent (NFD) are different keys and values, as they are different names in a file
/// system, LMDB, PostgreSQL and Chroma (Swift's `==` on `String` would call them equal).
public indirect enum SearchFilter: Sendable, Hashable {
    case compare(String, Comparison, MetadataValue)
    /// The field's value is one of these (`format in (pdf, docx)`).
    case oneOf(String, [MetadataValue])
    /// The field's text starts with this (`document_key ^= "reports/"`).
    case prefix(String, String)
    /// The field is present and not empty.
    case exists(String)
    case and([SearchFilter])
    case or([SearchFilter])

    /// How a field is compared with a value (`<`, `<=`, `>`, `>=`).
    public enum Comparison: String, Sendable, Hashable, CaseIterable {
        case equal = "="
        case notEqual = "!="
        case less = "<"
        case lessOrEqual = "<="
        case greater = ">"
        case greaterOrEqual = ">="

        /// `<`, `<=`, `>`, `>=`: compare numbers and times only.
        public var isRange: Bool { ![.equal, .notEqual].contains(self) }
    }

    /// The field that names the record's document.
    public static let documentKeyField = "document_key"
    /// The field that holds the record's position in its document (0, 1, …).
    public static let ordinalField = "ordinal"

    /// Every field the filter names.
    public var fields: Set<String> {
        switch self {
        case .compare(let field, _, _), .oneOf(let field, _), .prefix(let field, _), .exists(let field):
            return [field]
        case .and(let parts), .or(let parts):
            return parts.reduce(into: Set<String>()) { $0.formUnion($1.fields) }
        }
    }

    /// Whether a record with these values matches: the local stores' own evaluation.
    public func matches(_ value: (String) -> MetadataValue?) -> Bool {
        switch self {
        case .and(let parts): return parts.allSatisfy { $0.matches(value) }
        case .or(let parts): return parts.contains { $0.matches(value) }
        case .exists(let field): return value(field).map { !$0.isEmpty } ?? false
        case .prefix(let field, let prefix):
            guard let found = value(field) else { return false }
            if case .strings(let values) = found { return values.contains { $0.utf8.starts(with: prefix.utf8) } }
            return found.text.utf8.starts(with: prefix.utf8)
        case .oneOf(let field, let candidates):
            guard let found = value(field) else { return false }
            return candidates.contains { SearchFilter.equal(found, $0) }
        case .compare(let field, let comparison, let expected):
            guard let found = value(field) else { return false }
            switch comparison {
            case .equal: return SearchFilter.equal(found, expected)
            case .notEqual: return !SearchFilter.equal(found, expected)
            default:
                guard let order = SearchFilter.order(found, expected) else { return false }
                switch comparison {
                case .less: return order < 0
                case .lessOrEqual: return order <= 0
                case .greater: return order > 0
                default: return order >= 0
                }
            }
        }
    }

    /// The record's value of a field: `document_key`, `ordinal`, else its metadata.
    public func matches(_ record: VectorRecord) -> Bool {
        matches { field in
            switch field {
            case SearchFilter.documentKeyField: return .string(record.documentKey)
            case SearchFilter.ordinalField: return .int(record.ordinal)
            default: return record.metadata[field]
            }
        }
    }

    /// Equality as filters mean it: numbers by value, times by instant, lists by any element.
    static func equal(_ found: MetadataValue, _ expected: MetadataValue) -> Bool {
        if case .strings(let values) = found { return values.contains { equal(.string($0), expected) } }
        if case .time(let date) = expected { return found.date.map { abs($0.timeIntervalSince(date)) < 1 } ?? false }
        // A stored time against RFC 3339 text (quoted in a filter): the same instant, as the text stores see it.
        if case .time(let date) = found { return expected.date.map { abs($0.timeIntervalSince(date)) < 1 } ?? false }
        if let left = found.number, let right = expected.number, found.date == nil { return left == right }
        switch (found, expected) {
        case (.bool(let left), .bool(let right)): return left == right
        // By bytes, not by Swift's canonical equivalence (NFC and NFD are different texts in every store).
        case (.string(let left), .string(let right)): return left.utf8.elementsEqual(right.utf8)
        default: return false
        }
    }

    /// -1, 0 or 1 for numbers against numbers and times against times; nil otherwise.
    static func order(_ found: MetadataValue, _ expected: MetadataValue) -> Int? {
        let left: Double
        let right: Double
        if case .time(let date) = expected {
            guard let foundDate = found.date ?? found.number.map({ Date(timeIntervalSince1970: $0) }) else {
                return nil
            }
            left = foundDate.timeIntervalSince1970.rounded(.down)
            right = date.timeIntervalSince1970.rounded(.down)
        } else {
            // A number range does not match a time (no store compares times with numbers).
            if case .time = found { return nil }
            guard let a = found.number, let b = expected.number else { return nil }
            left = a
            right = b
        }
        return left < right ? -1 : (left > right ? 1 : 0)
    }
}

extension SearchFilter: CustomStringConvertible {
    /// The filter in the CLI's language (what the parser reads back).
    public var description: String {
        func literal(_ value: MetadataValue) -> String {
            switch value {
            case .string(let text):
                return "\""
                    + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
                    + "\""
            case .strings(let values): return "(" + values.map { literal(.string($0)) }.joined(separator: ", ") + ")"
            default: return value.text
            }
        }
        switch self {
        case .compare(let field, let comparison, let value): return "\(field) \(comparison.rawValue) \(literal(value))"
        case .oneOf(let field, let values): return "\(field) in (\(values.map(literal).joined(separator: ", ")))"
        case .prefix(let field, let prefix): return "\(field) ^= \(literal(.string(prefix)))"
        case .exists(let field): return "\(field) exists"
        case .and(let parts): return parts.map { "(\($0))" }.joined(separator: " and ")
        case .or(let parts): return parts.map { "(\($0))" }.joined(separator: " or ")
        }
    }
}
