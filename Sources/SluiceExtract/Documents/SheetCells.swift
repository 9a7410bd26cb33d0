internal import CLibXML2
import Foundation

/// The cells of a worksheet's rows with a value, as Excel shows them, one row at a time (``XMLStream``
/// hands the rows out).
struct SheetCells {
    struct Cell {
        /// 1 for column A.
        var column: Int
        var value: String
    }

    struct Row {
        /// The row's number in the sheet (1-based).
        var number: Int
        var cells: [Cell]
    }

    let shared: [String]
    /// What each cell format (`s`, an index into `cellXfs`) shows a number as.
    let formats: [SpreadsheetDates.Kind]
    let date1904: Bool
    /// The number of the last row read (a row without `r` follows it).
    private var lastRow = 0

    init(shared: [String], formats: [SpreadsheetDates.Kind], date1904: Bool) {
        self.shared = shared
        self.formats = formats
        self.date1904 = date1904
    }

    /// A `row` element's cells with a value; nil when it has none.
    mutating func row(of row: xmlNodePtr) -> Row? {
        let number = row.attribute("r").flatMap(Int.init) ?? lastRow + 1
        lastRow = number
        var cells: [Cell] = []
        var lastColumn = 0
        for cell in row.children where cell.isElement && cell.localName == "c" {
            let column = cell.attribute("r").flatMap(Self.column(of:)) ?? lastColumn + 1
            lastColumn = column
            let value = StructuredTextBuilder.collapse(self.value(of: cell))
            if !value.isEmpty { cells.append(Cell(column: column, value: value)) }
        }
        return cells.isEmpty ? nil : Row(number: number, cells: cells)
    }

    /// What a cell shows.
    func value(of cell: xmlNodePtr) -> String {
        let stored = cell.child("v").map(Self.text(of:)) ?? ""
        switch cell.attribute("t") ?? "n" {
        case "s": return Int(stored).flatMap { shared.indices.contains($0) ? shared[$0] : nil } ?? ""
        case "inlineStr": return cell.child("is").map(Self.richText(of:)) ?? ""
        case "b": return stored == "1" ? "TRUE" : stored == "0" ? "FALSE" : stored
        case "str", "e", "d": return stored
        default:
            if stored.isEmpty {
                // A formula the file holds no value of (written by a program that does not compute).
                return cell.child("f").map { "=" + Self.text(of: $0) } ?? ""
            }
            guard let index = cell.attribute("s").flatMap(Int.init), formats.indices.contains(index),
                formats[index] != .number, let serial = Double(stored)
            else { return stored }
            return SpreadsheetDates.text(serial: serial, kind: formats[index], date1904: date1904) ?? stored
        }
    }

    /// The column number of a cell reference: `C5` → 3.
    static func column(of reference: String) -> Int? {
        var column = 0
        for byte in reference.utf8 {
            guard (0x41...0x5A).contains(byte) else { break }
            column = column * 26 + Int(byte - 0x40)
            if column > 16_384 { return nil }  // past Excel's last column, XFD
        }
        return column > 0 ? column : nil
    }

    /// A string item (`si`) or inline string (`is`): its text, rich text runs joined; phonetic guides
    /// (`rPh`) left out.
    static func richText(of node: xmlNodePtr) -> String {
        var text = ""
        for child in node.children where child.isElement {
            switch child.localName {
            case "t": text += Self.text(of: child)
            case "r": text += child.child("t").map(Self.text(of:)) ?? ""
            default: continue
            }
        }
        return text
    }

    /// The text content of an element.
    static func text(of node: xmlNodePtr) -> String { node.children.filter(\.isText).map(\.content).joined() }
}
