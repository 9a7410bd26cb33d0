import SluiceCore

/// What the local store's keyword index holds of a record: its text, then its document's title and the
/// heading path it sits under (the `title` and `headings` metadata), so that a row of a sheet, a record of
/// a file or a passage deep in a manual matches the words of the name it is filed under, as the chunk that
/// opens its section does. Only the index holds them: the stored text, the snippet, `export` and every
/// output keep the record's own text.
///
/// A document without a title (a CSV file, a plain text, a PDF whose info has none) is named by its file
/// name instead (``name(of:)``: `csv/debian-releases.csv` gives `debian-releases`), so that the rows of
/// `debian-releases.csv` match *Debian* and *release* as a titled document's chunks match its title: on
/// Benchmarks/retrieval the rows of such files were found by one rare word of their own or not at all.
///
/// Each title and heading counts once per record (a Markdown title that is its first heading too, once), so
/// a record's own words still weigh most; they count in its length as well, so BM25's length normalisation
/// sees what it scores.
extension KeywordIndex {
    /// The terms of `record` as the index counts them: its text and its context (``context(of:)``), and the
    /// units it is scored by (`KeywordIndex+Units.swift`).
    static func counts(of record: VectorRecord) -> Counts {
        let context = Self.context(of: record)
        var whole = counts(of: context.isEmpty ? record.text : record.text + "\n" + context)
        if let units = units(of: record) {
            whole.units = Units(units, context: counts(of: context), whole: whole)
        }
        return whole
    }

    /// The record's title (or, without one, its document's name) and heading path, each once, a line each.
    static func context(of record: VectorRecord) -> String {
        var parts: [String] = []
        if case .string(let title)? = record.metadata["title"], !title.isEmpty {
            parts.append(title)
        } else {
            parts.append(name(of: record.documentKey))
        }
        if case .strings(let headings)? = record.metadata["headings"] { parts += headings }
        var seen: Set<String> = []
        return parts.filter { !$0.isEmpty && seen.insert($0).inserted }.joined(separator: "\n")
    }

    /// A document's name as its key says it: the key's last path component (of a URL's path too) without
    /// its extension; empty for a key that ends in a separator.
    /// Walks the key's UTF-8 bytes (its separators are ASCII, so the cuts fall between characters): once per
    /// record of a load, by `Character` it was 1.4% of a load's CPU.
    static func name(of documentKey: String) -> String {
        let bytes = documentKey.utf8
        let end = bytes.firstIndex { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") } ?? bytes.endIndex
        var start = bytes.startIndex
        var dot: String.Index?
        var index = bytes.startIndex
        while index < end {
            switch bytes[index] {
            case UInt8(ascii: "/"):
                start = bytes.index(after: index)
                dot = nil
            case UInt8(ascii: "."):
                dot = index
            default:
                break
            }
            index = bytes.index(after: index)
        }
        let stop = dot.flatMap { $0 != start ? $0 : nil } ?? end
        return String(Substring(documentKey.utf8[start..<stop]))
    }
}
