internal import CLibXML2
import Foundation
import SluiceCore

/// OpenDocument spreadsheets (ODS, as LibreOffice Calc saves them), read as ``XLSXExtractor`` reads Excel
/// workbooks: the ZIP container through `ZIPContainer` (with the limits of every ZIP-based format,
/// `extract.zip.*`) and `content.xml` through libxml2, any DTD refused before parsing.
///
/// Each sheet (`table:table`), in the document's order, laid out as XLSX's (`SheetSections`): its first
/// row with a value names the columns, every later row is a line `name: value; name: value` (empty cells
/// left out; a cell past the named columns is `column N`), in sections of `rowsPerSection` headed by the
/// sheet's name, with `sheet` and `lines` (the sheet's row numbers) in their metadata. A cell is what Calc
/// shows of it (its `text:p`, the last computed value of a formula), dates in ISO 8601
/// (`office:date-value`). Repeated rows and cells (`table:number-rows-repeated`, `…-columns-repeated`)
/// count as that many, up to Calc's own limits (1,048,576 rows, 16,384 columns); repeated empty ones only
/// move the row and column numbers on, and repeated values are charged to `extract.max_text_mb` before
/// they are laid out. Title and author come from `meta.xml`; `sheets` names the sheets.
///
/// Recognised by content: a ZIP archive whose first entry, `mimetype`, says
/// `application/vnd.oasis.opendocument.spreadsheet`, whatever its name.
public struct ODSExtractor: Extractor {
    let limits: ZIPContainer.Limits
    /// Rows per section.
    let rowsPerSection: Int

    /// Calc's limits: more rows or columns than these are not a sheet Calc wrote.
    static let maxRows = 1 << 20
    static let maxColumns = 1 << 14

    /// - Parameters:
    ///   - maxInflatedBytes: Most bytes inflated from one document in all (`extract.zip.max_inflated_mb`).
    ///   - maxCompressionRatio: Most inflated bytes per compressed byte of one part
    ///     (`extract.zip.max_compression_ratio`).
    ///   - rowsPerSection: Rows per section, as ``XLSXExtractor``'s.
    public init(maxInflatedBytes: Int = 100 << 20, maxCompressionRatio: Double = 200, rowsPerSection: Int = 100) {
        limits = ZIPContainer.Limits(maxInflatedBytes: maxInflatedBytes, maxCompressionRatio: maxCompressionRatio)
        self.rowsPerSection = rowsPerSection
    }

    public var name: String { "ods" }

    public func accepts(_ input: ExtractionInput) -> Bool {
        OpenDocumentPackage.kind(of: input.bytes) == .spreadsheet
    }

    public func extract(_ input: ExtractionInput) throws -> ExtractedText {
        try OpenDocumentPackage.extract(.spreadsheet, from: input, limits: limits) { body, _ in
            var budget = input.textBudget()
            var sections: [TextSection] = []
            var names: [String] = []
            for table in body.children where table.isElement && table.localName == "table" {
                let name = table.attribute("name") ?? "Sheet \(names.count + 1)"
                names.append(name)
                var layout = SheetSections(sheet: name, rowsPerSection: rowsPerSection)
                var rowNumber = 0
                try rows(of: table, depth: 0) { row in
                    let repeats = min(
                        max(row.attribute("number-rows-repeated").flatMap(Int.init) ?? 1, 1),
                        Self.maxRows
                    )
                    guard let cells = try Self.cells(of: row, budget: budget, repeats: repeats) else {
                        rowNumber += repeats
                        return
                    }
                    for _ in 0..<repeats {
                        rowNumber += 1
                        guard rowNumber <= Self.maxRows else { return }
                        try layout.add(SheetCells.Row(number: rowNumber, cells: cells), budget: &budget)
                    }
                }
                sections += try layout.finish(budget: &budget)
            }
            return (sections, ["sheets": names.joined(separator: ", ")])
        }
    }

    /// Calls `body` with each `table:table-row` of a sheet, in order, through header rows and row groups.
    private func rows(of node: xmlNodePtr, depth: Int, _ body: (xmlNodePtr) throws -> Void) throws {
        guard depth < 16 else { return }
        for child in node.children where child.isElement {
            switch child.localName {
            case "table-row": try body(child)
            case "table-header-rows", "table-rows", "table-row-group": try rows(of: child, depth: depth + 1, body)
            default: continue
            }
        }
    }

    /// A row's cells with a value (nil when it has none). The text of repeated values (times the row's own
    /// repeats) is charged to a copy of the budget first, so that a cell repeated 16,384 times in a row
    /// repeated a million times fails at the bound before it is laid out.
    static func cells(of row: xmlNodePtr, budget: TextBudget, repeats: Int) throws -> [SheetCells.Cell]? {
        var cells: [SheetCells.Cell] = []
        var column = 0
        var probe = budget
        for cell in row.children where cell.isElement {
            guard cell.localName == "table-cell" || cell.localName == "covered-table-cell" else { continue }
            let count = min(max(cell.attribute("number-columns-repeated").flatMap(Int.init) ?? 1, 1), maxColumns)
            let value = cell.localName == "table-cell" ? Self.value(of: cell) : ""
            if value.isEmpty {
                column += count
                continue
            }
            let (cost, overflow) = (value.utf8.count + 8).multipliedReportingOverflow(by: count * repeats)
            try probe.charge(overflow ? Int.max : cost)
            for _ in 0..<count {
                column += 1
                guard column <= maxColumns else { break }
                cells.append(SheetCells.Cell(column: column, value: value))
            }
        }
        return cells.isEmpty ? nil : cells
    }

    /// What Calc shows of a cell: its paragraphs (joined by spaces), a date as its ISO 8601 value, else the
    /// value attribute of its type.
    static func value(of cell: xmlNodePtr) -> String {
        if cell.attribute("value-type") == "date", let date = cell.attribute("date-value"), !date.isEmpty {
            return date
        }
        let shown = StructuredTextBuilder.collapse(OpenDocumentText.text(of: cell))
        if !shown.isEmpty { return shown }
        switch cell.attribute("value-type") {
        case "boolean": return cell.attribute("boolean-value") == "true" ? "TRUE" : "FALSE"
        case "time": return cell.attribute("time-value") ?? ""
        case "string": return cell.attribute("string-value") ?? ""
        case .some: return cell.attribute("value") ?? ""
        case nil: return ""
        }
    }
}
