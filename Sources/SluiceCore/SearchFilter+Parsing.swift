import Foundation

/// The filter language of the CLI (`--filter`):
///
///     format = pdf and page >= 3
///     document_key ^= "reports/2026/" or tags in (draft, "to review")
///     mtime >= 2026-01-01 and title exists
///
/// Conditions: `=`, `!=`, `<`, `<=`, `>`, `>=`, `in (…)`, `^=` (starts with), `exists`; combined with `and`,
/// `or` and parentheses (`and` binds tighter). Values: quoted strings, numbers, `true`/`false`, dates
/// (`2026-01-01` or RFC 3339 times, compared as times) and bare words (strings).
/// A filter that starts with `{` is read in the JSON form instead (``init(json:)``). A filter past
/// ``FilterLimits/standard`` (nesting of parentheses, conditions) is refused: the parser's recursion is
/// bounded by the nesting it accepts.
extension SearchFilter {
    public init(parsing text: String) throws {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if trimmed.hasPrefix("{") {
            guard let data = trimmed.data(using: .utf8),
                let object = try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
            else { throw SearchFilter.error("the filter starts with { but is not valid JSON") }
            self = try SearchFilter(json: object)
            return
        }
        var parser = FilterParser(tokens: try FilterParser.tokenize(trimmed))
        guard !parser.tokens.isEmpty else { throw SearchFilter.error("the filter is empty") }
        let filter = try parser.parseOr()
        try filter.check(.standard)
        if let extra = parser.peek { throw SearchFilter.error("unexpected \(extra.shown) after \(filter)") }
        self = filter
    }

    static func error(_ message: String) -> SluiceError {
        SluiceError(.usage, "filter: \(message)")
    }

    /// A literal as the language reads it: a date-like text is a time, a number-like text a number.
    static func literal(word: String) -> MetadataValue {
        if word == "true" { return .bool(true) }
        if word == "false" { return .bool(false) }
        if let number = Int(word) { return .int(number) }
        if let number = Double(word), number.isFinite { return .double(number) }
        if let time = time(word) { return .time(time) }
        return .string(word)
    }

    /// `2026-01-01` (midnight UTC) or an RFC 3339 time.
    static func time(_ text: String) -> Date? {
        if let date = MetadataValue.parseTime(text) { return date }
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2 else { return nil }
        return MetadataValue.parseTime(text + "T00:00:00Z")
    }
}

/// A recursive-descent parser over the filter's tokens.
struct FilterParser {
    enum Token: Equatable {
        case word(String)
        case quoted(String)
        case symbol(String)

        var shown: String {
            switch self {
            case .word(let text), .symbol(let text): return "'\(text)'"
            case .quoted(let text): return "\"\(text)\""
            }
        }
    }

    var tokens: [Token]
    var position = 0
    /// Open parentheses around the current token: refused past ``FilterLimits/maxDepth``, so that the
    /// recursion stays shallow whatever the input.
    var depth = 0

    var peek: Token? { position < tokens.count ? tokens[position] : nil }

    mutating func next() -> Token? {
        defer { position += 1 }
        return peek
    }

    static func tokenize(_ text: String) throws -> [Token] {
        var tokens: [Token] = []
        let scalars = Array(text.unicodeScalars)
        var index = 0
        let symbols: [String] = ["!=", "<=", ">=", "^=", "=", "<", ">", "(", ")", ","]
        while index < scalars.count {
            let scalar = scalars[index]
            if scalar.properties.isWhitespace {
                index += 1
                continue
            }
            if scalar == "\"" || scalar == "'" {
                var value = String.UnicodeScalarView()
                index += 1
                var closed = false
                while index < scalars.count {
                    if scalars[index] == "\\", index + 1 < scalars.count {
                        value.append(scalars[index + 1])
                        index += 2
                    } else if scalars[index] == scalar {
                        closed = true
                        index += 1
                        break
                    } else {
                        value.append(scalars[index])
                        index += 1
                    }
                }
                guard closed else { throw SearchFilter.error("a quoted value is not closed") }
                tokens.append(.quoted(String(value)))
                continue
            }
            if let symbol = symbols.first(where: { symbol in
                symbol.unicodeScalars.enumerated().allSatisfy { offset, expected in
                    index + offset < scalars.count && scalars[index + offset] == expected
                }
            }) {
                tokens.append(.symbol(symbol))
                index += symbol.unicodeScalars.count
                continue
            }
            var word = String.UnicodeScalarView()
            while index < scalars.count, !scalars[index].properties.isWhitespace,
                !"\"'=!<>^(),".unicodeScalars.contains(scalars[index])
            {
                word.append(scalars[index])
                index += 1
            }
            guard !word.isEmpty else { throw SearchFilter.error("unexpected '\(scalars[index])'") }
            tokens.append(.word(String(word)))
        }
        return tokens
    }

    mutating func parseOr() throws -> SearchFilter {
        var parts = [try parseAnd()]
        while peek == .word("or") {
            position += 1
            parts.append(try parseAnd())
        }
        return parts.count == 1 ? parts[0] : .or(parts)
    }

    mutating func parseAnd() throws -> SearchFilter {
        var parts = [try parseUnary()]
        while peek == .word("and") {
            position += 1
            parts.append(try parseUnary())
        }
        return parts.count == 1 ? parts[0] : .and(parts)
    }

    mutating func parseUnary() throws -> SearchFilter {
        if peek == .symbol("(") {
            position += 1
            depth += 1
            defer { depth -= 1 }
            guard depth <= FilterLimits.standard.maxDepth else {
                throw SearchFilter.error("parentheses nested deeper than \(FilterLimits.standard.maxDepth) levels")
            }
            let inner = try parseOr()
            guard next() == .symbol(")") else { throw SearchFilter.error("a '(' is not closed") }
            return inner
        }
        guard case .word(let field) = next() else {
            throw SearchFilter.error(
                "expected a field name\(position <= tokens.count ? " at \(tokens[position - 1].shown)" : " at the end")"
            )
        }
        guard let operation = next() else {
            throw SearchFilter.error("'\(field)' needs a condition, such as = or exists")
        }
        switch operation {
        case .word("exists"):
            return .exists(field)
        case .word("in"):
            guard next() == .symbol("(") else { throw SearchFilter.error("'in' needs a list: \(field) in (a, b)") }
            var values: [MetadataValue] = []
            while true {
                values.append(try value(for: field))
                switch next() {
                case .symbol(","): continue
                case .symbol(")"): return .oneOf(field, values)
                default: throw SearchFilter.error("the list after '\(field) in' is not closed")
                }
            }
        case .symbol("^="):
            guard case .string(let prefix) = try value(for: field, literal: false) else {
                throw SearchFilter.error("^= needs text")
            }
            return .prefix(field, prefix)
        case .symbol(let symbol):
            guard let comparison = SearchFilter.Comparison(rawValue: symbol) else {
                throw SearchFilter.error("unexpected '\(symbol)' after '\(field)'")
            }
            let value = try value(for: field)
            if comparison.isRange, value.number == nil {
                throw SearchFilter.error(
                    "\(field) \(symbol) \(value.text): ranges compare numbers and dates (2026-01-01), not text"
                )
            }
            return .compare(field, comparison, value)
        default:
            throw SearchFilter.error(
                "unexpected \(operation.shown) after '\(field)'; expected =, !=, <, <=, >, >=, in, ^= or exists"
            )
        }
    }

    mutating func value(for field: String, literal: Bool = true) throws -> MetadataValue {
        switch next() {
        case .quoted(let text): return .string(text)
        case .word(let word): return literal ? SearchFilter.literal(word: word) : .string(word)
        default: throw SearchFilter.error("'\(field)' needs a value")
        }
    }
}
