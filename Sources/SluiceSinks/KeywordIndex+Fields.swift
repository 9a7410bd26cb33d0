import SluiceCore

/// What the local store's keyword index holds of a record: its text, then its document's title and the
/// heading path it sits under (the `title` and `headings` metadata), so that a row of a sheet, a record of
/// a file or a passage deep in a manual matches the words of the name it is filed under, as the chunk that
/// opens its section does. Only the index holds them: the stored text, the snippet, `export` and every
/// output keep the record's own text.
///
/// Each title and heading counts once per record (a Markdown title that is its first heading too, once), so
/// a record's own words still weigh most; they count in its length as well, so BM25's length normalisation
/// sees what it scores.
extension KeywordIndex {
    /// The terms of `record` as the index counts them: its text and its context (``context(of:)``).
    static func counts(of record: VectorRecord) -> Counts {
        let context = Self.context(of: record)
        return counts(of: context.isEmpty ? record.text : record.text + "\n" + context)
    }

    /// The record's title and heading path, each once, a line each; empty without them.
    static func context(of record: VectorRecord) -> String {
        var parts: [String] = []
        if case .string(let title)? = record.metadata["title"] { parts.append(title) }
        if case .strings(let headings)? = record.metadata["headings"] { parts += headings }
        var seen: Set<String> = []
        return parts.filter { !$0.isEmpty && seen.insert($0).inserted }.joined(separator: "\n")
    }
}
