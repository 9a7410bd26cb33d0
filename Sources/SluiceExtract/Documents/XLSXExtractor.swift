internal import CLibXML2
import Foundation
import SluiceCore

/// Excel workbooks (XLSX, Office Open XML), read as ``DOCXExtractor`` reads Word documents: the ZIP
/// container through `ZIPContainer` (with its limits on inflation) and each XML part through libxml2, any
/// DTD refused before parsing.
///
/// Each worksheet, in the workbook's order, as ``CSVExtractor`` lays out a table: its first row with a value
/// names the columns, and every later row is a line `name: value; name: value` (empty cells left out; a
/// cell past the named columns is `column N`). Rows are grouped in sections of `rowsPerSection`, each
/// starting with the sheet's name as a Markdown heading line, its heading path the sheet's name and its
/// metadata the sheet and the rows it spans (`lines`, the sheet's row numbers `first-last`, as CSV's). Cells hold what Excel shows of them, as far as the file says:
/// shared and inline strings (rich text joined), numbers as stored, booleans as `TRUE`/`FALSE`, errors as
/// written (`#DIV/0!`), dates and times in ISO 8601 where the cell's number format is a date or time, and a
/// formula's last computed value (its text, `=SUM(C2:C4)`, when the file holds none). Title and author
/// come from `docProps/core.xml`.
///
/// Recognised by content: a ZIP archive holding `xl/workbook.xml`, whatever its name.
public struct XLSXExtractor: Extractor {
    let limits: ZIPContainer.Limits
    /// Rows per section.
    let rowsPerSection: Int

    /// - Parameters:
    ///   - maxInflatedBytes: Most bytes inflated from one workbook in all (`extract.zip.max_inflated_mb`).
    ///   - maxCompressionRatio: Most inflated bytes per compressed byte of one part
    ///     (`extract.zip.max_compression_ratio`).
    public init(maxInflatedBytes: Int = 100 << 20, maxCompressionRatio: Double = 200, rowsPerSection: Int = 100) {
        limits = ZIPContainer.Limits(maxInflatedBytes: maxInflatedBytes, maxCompressionRatio: maxCompressionRatio)
        self.rowsPerSection = rowsPerSection
    }

    public var name: String { "xlsx" }

    public func accepts(_ input: ExtractionInput) -> Bool { OfficePackage.holds("xl/workbook.xml", in: input.bytes) }

    public func extract(_ input: ExtractionInput) throws -> ExtractedText {
        var archive = try ZIPContainer(bytes: input.bytes, limits: limits)
        let workbookPart = "xl/workbook.xml"
        guard let workbookXML = try archive.part(workbookPart) else {
            throw SluiceError(.unsupportedFormat, "a ZIP archive without \(workbookPart) is not an XLSX")
        }
        let workbook = try ContainerXML.parse(workbookXML, name: workbookPart)
        let targets = try OfficeRelationships.of(workbookPart, in: &archive)
        let date1904 = ["1", "true"].contains(workbook.root?.child("workbookPr")?.attribute("date1904") ?? "")
        var sheets: [(name: String, part: String)] = []
        for sheet in workbook.root?.child("sheets")?.children ?? XMLChildren(first: nil)
        where sheet.isElement && sheet.localName == "sheet" {
            guard let id = sheet.attribute("id", namespace: OfficeRelationships.namespace), let target = targets[id]
            else {
                throw SluiceError(.malformed, "\(workbookPart) lists a sheet without a relationship")
            }
            // Chart sheets and dialog sheets hold no cells.
            guard target.type.hasSuffix("/worksheet") else { continue }
            sheets.append((sheet.attribute("name") ?? "Sheet \(sheets.count + 1)", target.path))
        }
        withExtendedLifetime(workbook) {}  // owns the nodes walked above

        // The parts that may be large (the shared strings, the sheets) are read an element at a time
        // (XMLStream): memory follows the text kept, not the size of a tree of the part.
        var shared: [String] = []
        if let part = targets.values.first(where: { $0.type.hasSuffix("/sharedStrings") })?.path,
            let bytes = try archive.part(part)
        {
            try XMLStream.elements("si", depth: 1, in: bytes, name: part) { shared.append(SheetCells.richText(of: $0)) }
        }
        var formats: [SpreadsheetDates.Kind] = []
        if let part = targets.values.first(where: { $0.type.hasSuffix("/styles") })?.path,
            let bytes = try archive.part(part)
        {
            let tree = try ContainerXML.parse(bytes, name: part)
            if let root = tree.root { formats = SpreadsheetDates.cellFormats(styles: root) }
            withExtendedLifetime(tree) {}
        }

        // One budget across the sheets: a cell's text counts each time a cell names it.
        var budget = input.textBudget()
        var sections: [TextSection] = []
        for sheet in sheets {
            guard let bytes = try archive.part(sheet.part) else {
                throw SluiceError(.malformed, "\(workbookPart) lists \(sheet.part), which the archive does not hold")
            }
            var cells = SheetCells(shared: shared, formats: formats, date1904: date1904)
            var layout = SheetSections(sheet: sheet.name, rowsPerSection: rowsPerSection)
            try XMLStream.elements("row", depth: 2, parent: "sheetData", in: bytes, name: sheet.part) { node in
                if let row = cells.row(of: node) { try layout.add(row, budget: &budget) }
            }
            sections += try layout.finish(budget: &budget)
        }
        guard !sections.isEmpty else { throw SluiceError(.emptyDocument, "the XLSX has no values in its sheets") }

        var metadata = try OfficePackage.coreProperties(in: &archive)
        metadata["format"] = "xlsx"
        metadata["sheets"] = sheets.map(\.name).joined(separator: ", ")
        return ExtractedText(sections: sections, metadata: metadata)
    }
}
