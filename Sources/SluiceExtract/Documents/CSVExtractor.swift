import Foundation
import SluiceCore

/// CSV and TSV: a line per row with the header's names, `name: value; name: value` (empty values are
/// left out; line breaks inside a quoted value become spaces). The first record is the header; a
/// blank header cell is named `column N`. The section metadata records the file lines each section
/// spans, and rows are grouped in sections of `rowsPerSection` so that chunks start at row
/// boundaries.
///
/// Recognised by extension (`.csv`; `.tsv`, `.tab` for tabs): CSV has no signature. The delimiter of a
/// `.csv` is a comma unless the header line has more semicolons or tabs than commas.
public struct CSVExtractor: Extractor {
    /// Rows per section.
    let rowsPerSection: Int

    public init(rowsPerSection: Int = 100) { self.rowsPerSection = rowsPerSection }

    public var name: String { "csv" }

    static let extensions: Set<String> = ["csv", "tsv", "tab"]

    public func accepts(_ input: ExtractionInput) -> Bool {
        Self.extensions.contains(input.fileURL.pathExtension.lowercased())
    }

    public func extract(_ input: ExtractionInput) throws -> ExtractedText {
        guard !input.bytes.isEmpty else { throw SluiceError(.emptyDocument, "zero-byte file: nothing to index") }
        // A character set the transport declared (an HTTP `Content-Type`'s) is decoded into UTF-8 first.
        let (bytes, decodedFrom) = Charset.utf8(input.bytes, declared: input.declaredCharset)
        try TextExtractor.rejectBinary(bytes)
        _ = try TextExtractor.decodeUTF8(bytes)
        let ext = input.fileURL.pathExtension.lowercased()
        let delimiter = ext == "csv" ? Self.sniffDelimiter(bytes) : 0x09
        var header: [String]?
        var sections: [TextSection] = []
        var rows: [String] = []
        var firstLine = 0
        var lastLine = 0
        var rowCount = 0
        // Each row is charged as it is made: the header's names are written before every value.
        var budget = input.textBudget()
        func flush() throws {
            guard !rows.isEmpty else { return }
            let section = TextSection(
                text: rows.joined(separator: "\n"),
                metadata: ["lines": "\(firstLine)-\(lastLine)"]
            )
            try budget.charge(labelsOf: section)
            sections.append(section)
            rows = []
        }
        do {
            try CSVReader(bytes: bytes, delimiter: delimiter).read { fields, line in
                guard let names = header else {
                    header = fields.enumerated().map { index, name in
                        let trimmed = name.trimmingCharacters(in: .whitespaces)
                        return trimmed.isEmpty ? "column \(index + 1)" : trimmed
                    }
                    return
                }
                var parts: [String] = []
                for (index, value) in fields.enumerated() {
                    let hasBreak = value.utf8.contains(0x0A) || value.utf8.contains(0x0D)
                    let flat = hasBreak ? value.split(whereSeparator: \.isNewline).joined(separator: " ") : value
                    let trimmed = Self.trim(flat)
                    guard !trimmed.isEmpty else { continue }
                    parts.append("\(index < names.count ? names[index] : "column \(index + 1)"): \(trimmed)")
                }
                guard !parts.isEmpty else { return }
                let row = parts.joined(separator: "; ")
                try budget.charge(row.utf8.count + 1)
                if rows.isEmpty { firstLine = line }
                lastLine = line
                rows.append(row)
                rowCount += 1
                if rows.count == rowsPerSection { try flush() }
            }
        } catch let failure as CSVReader.Failure {
            throw SluiceError(.malformed, "invalid CSV: \(failure.message)")
        }
        try flush()
        guard !sections.isEmpty else { throw SluiceError(.emptyDocument, "the table has a header but no rows") }
        var metadata = [
            "format": delimiter == 0x09 ? "tsv" : "csv", "columns": (header ?? []).joined(separator: ", "),
            "rows": String(rowCount),
        ]
        metadata["charset"] = decodedFrom
        return ExtractedText(sections: sections, metadata: metadata)
    }

    /// Trims spaces and tabs; the common case (nothing to trim) costs two byte reads.
    static func trim(_ text: String) -> String {
        let utf8 = text.utf8
        guard let first = utf8.first, let last = utf8.last else { return text }
        if first != 0x20 && first != 0x09 && last != 0x20 && last != 0x09 { return text }
        return text.trimmingCharacters(in: .whitespaces)
    }

    /// Comma, unless the first line has more semicolons or tabs (outside quotes) than commas.
    static func sniffDelimiter(_ bytes: [UInt8]) -> UInt8 {
        var counts: [UInt8: Int] = [0x2C: 0, 0x3B: 0, 0x09: 0]
        var quoted = false
        for byte in bytes.prefix(65_536) {
            if byte == UInt8(ascii: "\"") { quoted.toggle() }
            if quoted { continue }
            if byte == 0x0A { break }
            if counts[byte] != nil { counts[byte]! += 1 }
        }
        let best = counts.max { $0.value < $1.value || ($0.value == $1.value && $0.key != 0x2C && $1.key == 0x2C) }
        return best.map { $0.value > 0 ? $0.key : 0x2C } ?? 0x2C
    }
}
