import Foundation
import SluiceCore

/// A ``SearchFilter`` as a SQL condition over the table's `document_key` column and `metadata` jsonb,
/// with every value and key bound as a parameter (`$n`), never spliced into the text.
///
/// As in ``SearchFilter/matches(_:)``: numbers compare by value (`(metadata->$k)::numeric`, cast only when
/// `jsonb_typeof` says number, inside a `CASE` so a text value cannot make the cast fail); times are the
/// RFC 3339 text Sluice writes (`2026-11-25T12:00:00Z`), which sorts as text in time order; a list
/// matches when any element does (`?` on text; `?` also matches a plain string equal to it); `!=` needs
/// the field present; `exists` means present and not empty; `^=` is `starts_with`. Usable in any
/// statement that reads the table (vector and keyword searches alike). `document_key` and `ordinal` are
/// the table's columns. Text compares by its bytes (`=`, `<>` and `starts_with` under a deterministic
/// collation), as ``SearchFilter/matches(_:)`` does.
///
/// A filter PostgreSQL cannot hold exactly is refused before anything is bound (``PgvectorSink/filterLimits``):
/// U+0000 in a field or value (libpq would cut the value there), and more bound values than a statement
/// takes (``maxParameters``).
struct PgvectorFilter {
    /// The condition, to follow `WHERE` or `AND`.
    private(set) var sql = "TRUE"
    /// The bound values, for `$first`, `$first+1`, ….
    private(set) var parameters: [String?] = []
    private let first: Int

    /// The most bound values one statement takes: the protocol counts them in 16 bits, and PostgreSQL
    /// refuses more than 65,535.
    static let maxParameters = 65_535

    /// - Parameter firstParameter: the number of the first placeholder (the statement's own come first).
    /// - Throws: ``SluiceError/Code/usage`` for a filter past ``PgvectorSink/filterLimits`` or one that
    ///   would bind more than ``maxParameters`` values.
    init(_ filter: SearchFilter, firstParameter: Int) throws {
        try filter.check(PgvectorSink.limits, store: "pgvector")
        first = firstParameter
        sql = condition(filter)
        guard first + parameters.count - 1 <= Self.maxParameters else {
            throw SluiceError(
                .usage,
                "filter: pgvector binds at most \(Self.maxParameters) values in one statement; this filter needs \(parameters.count)"
            )
        }
    }

    private mutating func bind(_ value: String, as type: String = "text") -> String {
        parameters.append(value)
        return "$\(first + parameters.count - 1)::\(type)"
    }

    /// Sluice's own RFC 3339 form (UTC, whole seconds), the only one text comparison orders correctly.
    static let timePattern = #"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$"#

    private mutating func condition(_ filter: SearchFilter) -> String {
        switch filter {
        case .and(let parts): return "(" + parts.map { condition($0) }.joined(separator: " AND ") + ")"
        case .or(let parts): return "(" + parts.map { condition($0) }.joined(separator: " OR ") + ")"
        case .exists(let field):
            if field == SearchFilter.documentKeyField { return "(document_key <> '')" }
            if field == SearchFilter.ordinalField { return "TRUE" }
            let key = bind(field)
            return "(metadata ? \(key) AND metadata->\(key) NOT IN ('\"\"'::jsonb, '[]'::jsonb))"
        case .prefix(let field, let prefix):
            if field == SearchFilter.documentKeyField { return "starts_with(document_key, \(bind(prefix)))" }
            if field == SearchFilter.ordinalField { return "starts_with(ordinal::text, \(bind(prefix)))" }
            let value = "metadata->\(bind(field))"
            let text = bind(prefix)
            return """
                COALESCE(CASE WHEN jsonb_typeof(\(value)) = 'array' THEN EXISTS (SELECT 1 FROM \
                jsonb_array_elements_text(\(value)) AS e(t) WHERE starts_with(e.t, \(text))) \
                ELSE starts_with(\(value) #>> '{}', \(text)) END, FALSE)
                """
        case .oneOf(let field, let values):
            let texts = values.compactMap { value -> String? in
                if case .string(let text) = value { return text }
                return nil
            }
            if ![SearchFilter.documentKeyField, SearchFilter.ordinalField].contains(field), texts.count == values.count
            {
                return "COALESCE(metadata->\(bind(field)) ?| \(bind(Self.arrayLiteral(texts), as: "text[]")), FALSE)"
            }
            return condition(.or(values.map { .compare(field, .equal, $0) }))
        case .compare(let field, let comparison, let value):
            if field == SearchFilter.documentKeyField { return documentKey(comparison, value) }
            if field == SearchFilter.ordinalField { return ordinal(comparison, value) }
            let key = bind(field)
            let json = "metadata->\(key)"
            switch comparison {
            case .equal: return equal(json, value)
            case .notEqual: return "(metadata ? \(key) AND NOT \(equal(json, value)))"
            default:
                let op = comparison.rawValue
                if case .time(let date) = value {
                    let text = bind(MetadataValue.rfc3339(date))
                    let seconds = bind(String(Int64(date.timeIntervalSince1970.rounded(.down))), as: "numeric")
                    return """
                        COALESCE(CASE WHEN jsonb_typeof(\(json)) = 'string' AND (\(json) #>> '{}') ~ \
                        '\(Self.timePattern)' THEN (\(json) #>> '{}') COLLATE "C" \(op) \(text) \
                        WHEN jsonb_typeof(\(json)) = 'number' THEN floor((\(json))::numeric) \(op) \(seconds) \
                        ELSE FALSE END, FALSE)
                        """
                }
                return number(json, op, value)
            }
        }
    }

    /// Equality of a jsonb value, as ``SearchFilter/matches(_:)`` means it; never NULL.
    private mutating func equal(_ json: String, _ value: MetadataValue) -> String {
        switch value {
        case .int, .double: return number(json, "=", value)
        case .bool(let flag): return "COALESCE(\(json) = \(bind(flag ? "true" : "false", as: "jsonb")), FALSE)"
        case .time(let date): return "COALESCE(\(json) ? \(bind(MetadataValue.rfc3339(date))), FALSE)"
        case .string(let text): return "COALESCE(\(json) ? \(bind(text)), FALSE)"
        case .strings: return "FALSE"  // filter values are never lists (the parser refuses them)
        }
    }

    private mutating func number(_ json: String, _ op: String, _ value: MetadataValue) -> String {
        let literal: String
        switch value {
        case .int(let number): literal = String(number)
        case .double(let number) where number.isFinite: literal = String(number)
        default: return "FALSE"
        }
        let bound = bind(literal, as: "numeric")
        return
            "COALESCE(CASE WHEN jsonb_typeof(\(json)) = 'number' THEN (\(json))::numeric \(op) \(bound) ELSE FALSE END, FALSE)"
    }

    private mutating func documentKey(_ comparison: SearchFilter.Comparison, _ value: MetadataValue) -> String {
        // The key is text: equal only to text, unequal to anything else; ranges compare numbers and times.
        guard case .string(let text) = value else { return comparison == .notEqual ? "TRUE" : "FALSE" }
        switch comparison {
        case .equal: return "(document_key = \(bind(text)))"
        case .notEqual: return "(document_key <> \(bind(text)))"
        default: return "FALSE"
        }
    }

    /// The `ordinal` column: an integer, compared with numbers (text matches nothing, and is unequal to
    /// every ordinal).
    private mutating func ordinal(_ comparison: SearchFilter.Comparison, _ value: MetadataValue) -> String {
        let literal: String
        switch value {
        case .int(let number): literal = String(number)
        case .double(let number) where number.isFinite: literal = String(number)
        // A range against a time reads the ordinal as Unix seconds, as for any number in the metadata.
        case .time(let date) where comparison.isRange:
            literal = String(Int64(date.timeIntervalSince1970.rounded(.down)))
        default: return comparison == .notEqual ? "TRUE" : "FALSE"
        }
        return "(ordinal::numeric \(comparison.rawValue) \(bind(literal, as: "numeric")))"
    }

    /// A PostgreSQL array literal of texts (`{"a","b\"c"}`).
    static func arrayLiteral(_ texts: [String]) -> String {
        "{"
            + texts.map { text in
                "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
                    + "\""
            }.joined(separator: ",") + "}"
    }
}
