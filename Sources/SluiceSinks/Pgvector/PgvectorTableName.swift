import SluiceCore

/// A pgvector `sink.table`: `table` or `schema.table`, each part a plain identifier (an ASCII letter or `_`,
/// then letters, digits and `_`) or a double-quoted one, which may hold any character but NUL (a `"` doubled
/// inside it): `"my.table"`, `"my.schema".chunks`. Every statement quotes both parts, so a plain part is
/// case-sensitive too (`Mixed_Case` is the table `"Mixed_Case"`). A part is at most 63 bytes, PostgreSQL's
/// limit (a longer name would be cut short by the server, and two names could meet).
///
/// The parts are kept apart so that a dot inside a quoted part is never read as the schema's end: the
/// folding configuration goes in the table's schema (``PgvectorSink/foldingConfiguration(table:)``), and the
/// names made from the table's (its indexes, `<table>_generations`, a generation's `<table>_g2`) add to the
/// table's part.
struct PgvectorTableName: Equatable {
    /// The schema's name, unquoted; nil for the search path's first.
    var schema: String?
    /// The table's name, unquoted.
    var table: String

    /// PostgreSQL's longest identifier, in bytes (`NAMEDATALEN - 1`).
    static let maxIdentifierBytes = 63

    /// Reads `text` as the pipeline file writes it; nil when it is not such a name.
    init?(parsing text: String) {
        var parts: [String] = []
        var rest = Substring(text)
        while true {
            guard let (part, after) = Self.identifier(rest) else { return nil }
            parts.append(part)
            guard let next = after.first else { break }
            guard next == ".", parts.count < 2 else { return nil }
            rest = after.dropFirst()
        }
        schema = parts.count == 2 ? parts[0] : nil
        table = parts[parts.count - 1]
    }

    init(schema: String?, table: String) {
        self.schema = schema
        self.table = table
    }

    /// The name as statements write it: `"schema"."table"`.
    var quoted: String { (schema.map { Self.quote($0) + "." } ?? "") + Self.quote(table) }

    /// The schema as statements write it, nil without one.
    var quotedSchema: String? { schema.map(Self.quote) }

    /// The name as the pipeline file writes it: plain parts bare, the others quoted.
    var text: String { (schema.map { Self.written($0) + "." } ?? "") + Self.written(table) }

    /// The name of a relation beside this table, in its schema: the table's name with `suffix` added.
    func appending(_ suffix: String) -> PgvectorTableName {
        PgvectorTableName(schema: schema, table: table + suffix)
    }

    /// The name of a relation derived from this table's (an index, `<table>_generations`): `<table><suffix>`
    /// when it fits in 63 bytes; else the table's name cut short (at a character), `_`, eight hex digits of
    /// the XXH3-128 of the whole name, then `suffix`: within the limit, and distinct for distinct tables
    /// (``PgvectorIndexName``). `legacy` is the name the server made of the whole name by cutting it to 63
    /// bytes, as older versions let it; nil when the name fits.
    func fitting(_ suffix: String) -> (name: String, legacy: String?) {
        let full = table + suffix
        let limit = Self.maxIdentifierBytes
        guard full.utf8.count > limit else { return (full, nil) }
        let hash = "_" + ContentHash(utf8: full).hex.prefix(8)
        let name = PgvectorIndexName.clipped(table, to: limit - hash.utf8.count - suffix.utf8.count) + hash + suffix
        return (name, PgvectorIndexName.clipped(full, to: limit))
    }

    /// `identifier` in double quotes, a `"` inside it doubled.
    static func quote(_ identifier: String) -> String { enclose(identifier, in: "\"") }

    /// `text` as a SQL string literal: in single quotes, a `'` inside it doubled.
    static func literal(_ text: String) -> String { enclose(text, in: "'") }

    /// `text` between two `mark`s, each `mark` inside it doubled (by Unicode scalar, not by character: a
    /// mark followed by a combining accent is one character, and still a mark to the server).
    private static func enclose(_ text: String, in mark: Unicode.Scalar) -> String {
        var out = String.UnicodeScalarView()
        out.append(mark)
        for scalar in text.unicodeScalars {
            out.append(scalar)
            if scalar == mark { out.append(mark) }
        }
        out.append(mark)
        return String(out)
    }

    private static func isPlain(_ identifier: String) -> Bool {
        guard let first = identifier.first, first == "_" || (first.isASCII && first.isLetter) else { return false }
        return identifier.allSatisfy { $0 == "_" || ($0.isASCII && ($0.isLetter || $0.isNumber)) }
    }

    private static func written(_ identifier: String) -> String {
        isPlain(identifier) ? identifier : quote(identifier)
    }

    /// The identifier at the front of `text` and what follows it; nil when there is none, or it is empty,
    /// holds NUL or is longer than PostgreSQL keeps. Read by Unicode scalar, as the server reads bytes: a
    /// quote followed by a combining mark is still a quote.
    private static func identifier(_ text: Substring) -> (String, Substring)? {
        let scalars = text.unicodeScalars
        var name = String.UnicodeScalarView()
        var index = scalars.startIndex
        if scalars.first == "\"" {
            index = scalars.index(after: index)
            while true {
                guard index < scalars.endIndex else { return nil }  // no closing quote
                let scalar = scalars[index]
                index = scalars.index(after: index)
                if scalar == "\"" {
                    guard index < scalars.endIndex, scalars[index] == "\"" else { break }
                    index = scalars.index(after: index)
                }
                name.append(scalar)
            }
        } else {
            while index < scalars.endIndex, scalars[index] != "." {
                name.append(scalars[index])
                index = scalars.index(after: index)
            }
            guard isPlain(String(name)) else { return nil }
        }
        let identifier = String(name)
        guard !identifier.isEmpty, !identifier.utf8.contains(0), identifier.utf8.count <= maxIdentifierBytes else {
            return nil
        }
        return (identifier, Substring(scalars[index...]))
    }
}

extension PgvectorSink {
    /// The `sink.table` of a relation beside `table` (a generation's `<table>_g2`, the view `<table>_active`):
    /// `suffix` added to the table's part, so `"my.table"` gives `"my.table_g2"`. A name that does not read
    /// (``PgvectorTableName``) gets `suffix` as it is, and is refused where it is used.
    package static func table(_ table: String, adding suffix: String) -> String {
        PgvectorTableName(parsing: table)?.appending(suffix).text ?? table + suffix
    }

    /// `table` without `suffix` at the end of its table's part (``table(_:adding:)`` undone); `table` as it
    /// is when it does not end so.
    package static func table(_ table: String, removing suffix: String) -> String {
        guard var name = PgvectorTableName(parsing: table), name.table.hasSuffix(suffix), name.table != suffix else {
            return table
        }
        name.table.removeLast(suffix.count)
        return name.text
    }
}
