import SluiceCore

/// Lays out one worksheet's rows as ``XLSXExtractor`` writes them, as they are read: the first row with a
/// value names the columns, every later row is a line `name: value; name: value` (a cell past the named
/// columns is `column N`), grouped in sections of `rowsPerSection` that start with the sheet's name as a
/// Markdown heading line and carry `sheet` and `lines` (the rows spanned, `first-last`). A sheet of one
/// row is that row.
///
/// Each line is charged to the budget before it is kept, and each section's heading and metadata when it
/// is closed: a header or a shared string written before every value stops at `extract.max_text_mb`,
/// whatever the sheet holds.
struct SheetSections {
    let sheet: String
    let rowsPerSection: Int
    private var header: SheetCells.Row?
    private var names: [Int: String] = [:]
    private var lines: [String] = []
    private var firstRow = 0
    private var lastRow = 0
    private var hasValues = false
    private(set) var sections: [TextSection] = []

    init(sheet: String, rowsPerSection: Int) {
        self.sheet = sheet
        self.rowsPerSection = rowsPerSection
    }

    /// Takes the next row with a value.
    /// - Throws: ``SluiceError/Code/textTooLarge`` when its line passes the budget.
    mutating func add(_ row: SheetCells.Row, budget: inout TextBudget) throws {
        guard header != nil else {
            header = row
            for cell in row.cells { names[cell.column] = cell.value }
            return
        }
        let line = row.cells.map { "\(names[$0.column] ?? "column \($0.column)"): \($0.value)" }
            .joined(separator: "; ")
        try budget.charge(line.utf8.count + 1)
        if lines.isEmpty { firstRow = row.number }
        lastRow = row.number
        lines.append(line)
        hasValues = true
        if lines.count == rowsPerSection { try flush(budget: &budget) }
    }

    /// The sheet's sections, after its last row.
    mutating func finish(budget: inout TextBudget) throws -> [TextSection] {
        if !hasValues, let header {
            let line = header.cells.map(\.value).joined(separator: "; ")
            try budget.charge(line)
            lines = [line]
            firstRow = header.number
            lastRow = header.number
        }
        try flush(budget: &budget)
        return sections
    }

    private mutating func flush(budget: inout TextBudget) throws {
        guard !lines.isEmpty else { return }
        let section = TextSection(
            text: "# " + sheet + "\n\n" + lines.joined(separator: "\n"),
            headingPath: [sheet],
            metadata: ["sheet": sheet, "lines": "\(firstRow)-\(lastRow)"]
        )
        try budget.charge(labelsOf: section)
        try budget.charge(sheet.utf8.count + 4)  // the heading line
        sections.append(section)
        lines = []
    }
}
