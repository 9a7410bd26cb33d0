import SluiceCore

/// The units a chunk is scored by in the local keyword index: each row of a table chunk (CSV, TSV, XLSX, ODS)
/// and each record of a JSON chunk (JSON, JSON Lines) is scored as a text of its own — its terms and its
/// length, with the chunk's title (or file name) and headings (`KeywordIndex+Fields.swift`) — against the
/// index's statistics (N, df and the average length stay over chunks), and the chunk scores as its best
/// unit. BM25 over the whole chunk let the other rows dilute the one that matches, so that a short passage
/// holding fewer of the query's words passed it (Benchmarks/retrieval, "the bar's misses": `q060`, `q063`,
/// `q183`). Every other chunk is one unit, scored exactly as before.
///
/// The units come from the layout the extractors write, named by the record's `format` metadata (the
/// document's format as its extractor recognised it, not the file's extension):
/// - a table's rows are lines: `CSVExtractor` turns a line break inside a quoted value into a space and the
///   sheets' cells are collapsed (`SheetCells`), so a row never spans two lines; a sheet section's heading
///   line (`# Sheet`) is a unit too, as it is in the chunk;
/// - a JSON file's records are sections, which the structured chunker joins with a blank line, and every
///   line of a record starts with its value's path (`$…`): a record starts at a line that opens with `$`
///   after a blank line, so a value holding a blank line stays in its record.
/// A chunk cut from the middle of a section starts with a partial row or record, which is a unit as any
/// other. Lines with no term are in no unit; a chunk of one unit is scored whole (the same score).
extension KeywordIndex {
    /// The formats whose chunks are scored row by row, and record by record.
    static let tableFormats: Set<String> = ["csv", "tsv", "xlsx", "ods"]
    static let recordFormats: Set<String> = ["json", "jsonl"]

    /// The units of `record` as their non-blank lines, nil when it is scored whole (not a table or record
    /// chunk, or a single unit).
    static func units(of record: VectorRecord) -> [[Substring]]? {
        guard case .string(let format)? = record.metadata["format"] else { return nil }
        let records = recordFormats.contains(format)
        guard records || tableFormats.contains(format) else { return nil }
        var units: [[Substring]] = []
        var blank = true
        for line in record.text.split(separator: "\n", omittingEmptySubsequences: false) {
            guard line.contains(where: { !$0.isWhitespace }) else {
                blank = true
                continue
            }
            if units.isEmpty || !records || (blank && line.first == "$") {
                units.append([line])
            } else {
                units[units.count - 1].append(line)
            }
            blank = false
        }
        return units.count > 1 ? units : nil
    }

    /// A record's units as the index scores them: each unit's length (its terms and its context's), and for
    /// each term of the record (by its number in the record's ``Counts/table``) the units that hold it with
    /// its frequency there, units ascending.
    struct Units: Sendable {
        var lengths: [Int] = []
        var occurrences: [[(unit: Int, frequency: Int)]] = []

        /// The units of a record whose whole text and context `whole` counted: `units` (their lines) and its
        /// context's terms `context`. Units without a term of their own are left out; nil when fewer than two
        /// are left.
        init?(_ units: [[Substring]], context: Counts, whole: Counts) {
            occurrences = Array(repeating: [], count: whole.table.count)
            for lines in units {
                let unit = lengths.count
                var length = 0
                for line in lines {
                    KeywordIndex.forEachCountedTerm(of: String(line)) { term in
                        length += 1
                        guard let term, let number = whole.table.number(of: term) else { return }
                        if occurrences[number].last?.unit == unit {
                            occurrences[number][occurrences[number].count - 1].frequency += 1
                        } else {
                            occurrences[number].append((unit, 1))
                        }
                    }
                }
                if length > 0 { lengths.append(length + context.length) }
            }
            guard lengths.count > 1 else { return nil }
            // The context's terms are in every unit.
            for index in 0..<context.table.count {
                let found = context.table.term(index).withUnsafeBufferPointer { whole.table.number(of: $0) }
                guard let number = found else { continue }
                let frequency = context.frequencies[index]
                var merged: [(unit: Int, frequency: Int)] = []
                merged.reserveCapacity(lengths.count)
                var own = occurrences[number][...]
                for unit in lengths.indices {
                    var count = frequency
                    if let first = own.first, first.unit == unit {
                        count += first.frequency
                        own = own.dropFirst()
                    }
                    merged.append((unit, count))
                }
                occurrences[number] = merged
            }
        }

        /// The units holding the term numbered `number`, with its frequency in each and each one's length.
        func postings(of number: Int) -> [(unit: Int, frequency: Int, length: Int)] {
            occurrences[number].map { ($0.unit, $0.frequency, lengths[$0.unit]) }
        }
    }
}
