import Foundation
import SluiceCore

/// Reads an RTF document's bytes in one pass, group by group, and feeds a ``StructuredTextBuilder``, as
/// ``RTFExtractor`` describes: control words and groups are dropped, destinations that are not text
/// skipped (``RTFDestination``), `\uN` (with its `\ucN` fallback count) and `\'hh` (by the code page in
/// force, ``RTFCodePage``) decoded; `\par` ends a paragraph, `\line` breaks a line; headings come from
/// `\outlinelevelN` or the paragraph style's (a `heading N` style of the style sheet); list paragraphs
/// (`\lsN`) become lines marked as their list text says (`1.`) or `-`, indented by `\ilvlN`; table rows
/// (`\cell`, `\row`) become lines of cells joined by ` | `; footnotes follow the body under "Notes".
///
/// Formatting state (destination, `\uc`, font, paragraph properties) is saved at `{` and restored at
/// `}`, as RTF defines. Groups nested deeper than ``maxDepth`` are refused.
struct RTFReader {
    /// Deepest group nesting read (libxml2's limit for XML, far past what word processors write).
    static let maxDepth = 256

    private let bytes: [UInt8]
    private var position = 0
    private var builder: StructuredTextBuilder

    /// What a group saves and restores.
    private struct State {
        var destination = RTFDestination.body
        var unicodeSkip = 1
        var font: Int?
        var style = 0
        var outlineLevel: Int?
        var list: Int?
        var listLevel = 0
        var inTable = false
    }

    private var state = State()
    private var stack: [State] = []

    // Document-wide settings.
    private var codePage = 1252
    private var defaultFont: Int?
    private var fontCodePages: [Int: Int] = [:]
    private var currentFontEntry: Int?
    private var styles: [Int: (name: String, outlineLevel: Int?)] = [:]
    private var styleEntry: (number: Int, name: String, outlineLevel: Int?)?

    // Text being gathered.
    private var pendingBytes: [UInt8] = []
    private var pendingHighSurrogate: UInt16?
    private var paragraph = ""
    private var listText = ""
    private var cells: [String] = []
    private var inTableBlock = false
    private var notes: [String] = []
    private var note = ""
    private var noteDepth: Int?
    private var skipFallback = 0
    private(set) var info: [String: String] = [:]

    init(bytes: [UInt8], budget: TextBudget) {
        self.bytes = bytes
        builder = StructuredTextBuilder(budget: budget)
    }

    /// Reads the whole document.
    /// - Throws: ``SluiceError/Code/tooDeep`` past ``maxDepth``, ``SluiceError/Code/textTooLarge`` past the
    ///   budget.
    mutating func read() throws -> [TextSection] {
        while position < bytes.count {
            if let exceeded = builder.exceeded { throw exceeded }
            let byte = bytes[position]
            switch byte {
            case UInt8(ascii: "{"):
                position += 1
                flushBytes()
                skipFallback = 0
                guard stack.count < Self.maxDepth else {
                    throw SluiceError(
                        .tooDeep,
                        "RTF groups nested deeper than \(Self.maxDepth) levels (at byte \(position - 1)); refused"
                    )
                }
                stack.append(state)
                if state.destination == .styleSheet {
                    // An entry of the style sheet: its number, its outline level and its name.
                    state.destination = .styleEntry
                    styleEntry = (0, "", nil)
                }
            case UInt8(ascii: "}"):
                position += 1
                flushBytes()
                skipFallback = 0
                guard let saved = stack.popLast() else { break }
                closeGroup(restoring: saved)
                if stack.isEmpty { position = bytes.count }  // the document's closing brace: what follows is not RTF
            case UInt8(ascii: "\\"):
                try controlWord()
            case 0x0D, 0x0A:
                position += 1
            default:
                position += 1
                if skipFallback > 0 {
                    skipFallback -= 1
                } else if byte >= 0x80 {
                    pendingBytes.append(byte)
                } else {
                    flushBytes()
                    append(String(UnicodeScalar(byte)))
                }
            }
        }
        flushBytes()
        endParagraph()
        endTable()
        let found = notes.filter { !$0.isEmpty }
        if !found.isEmpty {
            builder.heading("Notes", level: 1)
            for note in found { builder.paragraph(note) }
        }
        return try builder.finish()
    }

    // MARK: Groups and control words

    private mutating func closeGroup(restoring saved: State) {
        switch state.destination {
        case .styleEntry:
            if let entry = styleEntry {
                let name = entry.name.trimmingCharacters(in: [" ", ";"])
                styles[entry.number] = (name, entry.outlineLevel)
            }
            styleEntry = nil
        case .footnote where noteDepth == stack.count + 1:
            notes.append(StructuredTextBuilder.collapse(note))
            note = ""
            noteDepth = nil
        default:
            break
        }
        state = saved
    }

    private mutating func controlWord() throws {
        position += 1  // the backslash
        guard position < bytes.count else { return }
        let first = bytes[position]
        guard Self.isLetter(first) else {
            position += 1
            controlSymbol(first)
            return
        }
        let start = position
        while position < bytes.count, Self.isLetter(bytes[position]), position - start < 32 { position += 1 }
        let word = String(decoding: bytes[start..<position], as: UTF8.self)
        var parameter: Int?
        let digitsStart = position
        var negative = false
        if position < bytes.count, bytes[position] == UInt8(ascii: "-") {
            negative = true
            position += 1
        }
        var value = 0
        while position < bytes.count, Self.isDigit(bytes[position]), position - digitsStart < 11 {
            value = value * 10 + Int(bytes[position] - 0x30)
            position += 1
        }
        if position > digitsStart + (negative ? 1 : 0) {
            parameter = negative ? -value : value
        } else if negative {
            position = digitsStart
        }
        if position < bytes.count, bytes[position] == UInt8(ascii: " ") { position += 1 }  // the delimiter
        if word != "bin" && word != "u" { flushBytes() }
        if skipFallback > 0, word != "bin" {
            skipFallback -= 1
            return
        }
        handle(word, parameter)
    }

    private mutating func controlSymbol(_ symbol: UInt8) {
        switch symbol {
        case UInt8(ascii: "'"):
            guard position + 1 < bytes.count, let high = Self.hex(bytes[position]),
                let low = Self.hex(bytes[position + 1])
            else { return }
            position += 2
            if skipFallback > 0 {
                skipFallback -= 1
            } else {
                pendingBytes.append(high << 4 | low)
            }
            return
        case UInt8(ascii: "*"):
            // An ignorable destination: skipped unless it is one this reader knows.
            if position < bytes.count, bytes[position] == UInt8(ascii: "\\") {
                let save = position
                position += 1
                var end = position
                while end < bytes.count, Self.isLetter(bytes[end]) { end += 1 }
                let word = String(decoding: bytes[position..<end], as: UTF8.self)
                position = save
                if RTFDestination.named(word) == nil { state.destination = .skipped }
            } else {
                state.destination = .skipped
            }
            return
        default:
            break
        }
        flushBytes()
        if skipFallback > 0 {
            skipFallback -= 1
            return
        }
        switch symbol {
        case UInt8(ascii: "\\"), UInt8(ascii: "{"), UInt8(ascii: "}"): append(String(UnicodeScalar(symbol)))
        case UInt8(ascii: "~"): append("\u{00A0}")
        case UInt8(ascii: "_"): append("-")
        case 0x0D, 0x0A: handle("par", nil)
        case UInt8(ascii: "\t"): append("\t")
        default: break  // \- (optional hyphen), \| and \: (formulas): nothing
        }
    }

    private mutating func handle(_ word: String, _ parameter: Int?) {
        if let destination = RTFDestination.named(word) {
            enter(destination)
            return
        }
        switch word {
        // Document settings.
        case "ansicpg": codePage = parameter ?? codePage
        case "ansi": codePage = 1252
        case "mac": codePage = 10000
        case "pc": codePage = 437
        case "pca": codePage = 850
        case "deff": defaultFont = parameter
        // Fonts: in the font table, which code page each uses; elsewhere, the current font.
        case "f":
            if state.destination == .fontTable {
                currentFontEntry = parameter
            } else {
                state.font = parameter
            }
        case "fcharset":
            if state.destination == .fontTable, let font = currentFontEntry,
                let page = RTFCodePage.codePage(charset: parameter ?? 0)
            {
                fontCodePages[font] = page
            }
        case "cpg":
            if state.destination == .fontTable, let font = currentFontEntry, let parameter {
                fontCodePages[font] = parameter
            }
        case "plain": state.font = nil
        // Unicode.
        case "uc": state.unicodeSkip = max(0, min(parameter ?? 1, 8))
        case "u":
            guard let parameter else { return }
            flushBytes()
            unicode(parameter)
            skipFallback = state.unicodeSkip
        case "bin":
            // Binary data (inside a picture or object, normally): skipped whole.
            position = min(bytes.count, position + max(0, parameter ?? 0))
        // Paragraph properties.
        case "pard":
            state.style = 0
            state.outlineLevel = nil
            state.list = nil
            state.listLevel = 0
            state.inTable = false
        case "s":
            if state.destination == .styleEntry {
                styleEntry?.number = parameter ?? 0
            } else {
                state.style = parameter ?? 0
            }
        case "outlinelevel":
            if state.destination == .styleEntry {
                styleEntry?.outlineLevel = parameter
            } else {
                state.outlineLevel = parameter
            }
        case "ls": state.list = parameter
        case "ilvl": state.listLevel = max(0, min(parameter ?? 0, 8))
        case "intbl": state.inTable = true
        // Breaks.
        case "par", "sect", "page":
            if state.destination == .footnote {
                note += " "
            } else if state.destination == .body {
                if state.inTable { paragraph += " " } else { endParagraph() }
            }
        case "line": append("\n")
        case "tab": if state.destination != .listText { append("\t") } else { append(" ") }
        case "cell", "nestcell":
            guard state.destination == .body else { return }
            cells.append(StructuredTextBuilder.collapse(paragraph))
            paragraph = ""
            listText = ""
        case "row", "nestrow":
            guard state.destination == .body else { return }
            endRow()
        // Characters.
        case "emdash": append("\u{2014}")
        case "endash": append("\u{2013}")
        case "bullet": append("\u{2022}")
        case "lquote": append("\u{2018}")
        case "rquote": append("\u{2019}")
        case "ldblquote": append("\u{201C}")
        case "rdblquote": append("\u{201D}")
        case "emspace", "enspace", "qmspace": append(" ")
        default: break  // formatting: dropped
        }
    }

    private mutating func enter(_ destination: RTFDestination) {
        guard state.destination != .skipped else { return }
        switch destination {
        case .footnote:
            guard state.destination == .body else {
                state.destination = .skipped
                return
            }
            let marker = "[\(notes.count + 1)]"
            paragraph += marker
            note = marker + " "
            noteDepth = stack.count
            state.destination = .footnote
            // A footnote's paragraph properties are its own.
            state.inTable = false
        case .title, .author:
            state.destination = state.destination == .info ? destination : .skipped
        case .listText:
            state.destination = state.destination == .body ? .listText : .skipped
        case .fieldResult:
            break  // a field's result is text where the field stands
        default:
            state.destination = destination
        }
    }

    // MARK: Text

    private mutating func unicode(_ value: Int) {
        let unit = UInt16(truncatingIfNeeded: value < 0 ? value + 65_536 : value)
        if (0xD800...0xDBFF).contains(unit) {
            pendingHighSurrogate = unit
            return
        }
        var scalar: Unicode.Scalar?
        if (0xDC00...0xDFFF).contains(unit) {
            if let high = pendingHighSurrogate {
                let value = 0x10000 + (UInt32(high - 0xD800) << 10) + UInt32(unit - 0xDC00)
                scalar = Unicode.Scalar(value)
            }
        } else {
            scalar = Unicode.Scalar(UInt32(unit))
        }
        pendingHighSurrogate = nil
        let character = scalar ?? "\u{FFFD}"
        guard character.value >= 0x20 || character == "\t" || character == "\n" else { return }  // controls
        append(String(character))
    }

    private mutating func flushBytes() {
        guard !pendingBytes.isEmpty else { return }
        let page = state.font.flatMap { fontCodePages[$0] } ?? defaultFont.flatMap { fontCodePages[$0] } ?? codePage
        let text = RTFCodePage.decode(pendingBytes, codePage: page == 1252 ? codePage : page)
        pendingBytes = []
        append(text)
    }

    private mutating func append(_ text: String) {
        switch state.destination {
        case .body: paragraph += text
        case .listText: listText += text
        case .footnote: note += text
        case .title, .author:
            let key = state.destination == .title ? "title" : "author"
            info[key, default: ""] += text
        case .styleEntry: styleEntry?.name += text
        default: break
        }
        if paragraph.utf8.count > builder.budget.limit {
            builder.paragraph(paragraph)  // a paragraph past the budget: the builder says so, and stops
            paragraph = ""
        }
    }

    private mutating func endParagraph() {
        defer {
            paragraph = ""
            listText = ""
        }
        let text = paragraph
        guard text.contains(where: { !$0.isWhitespace }) else { return }
        endTable()
        if let level = headingLevel() {
            builder.heading(text, level: level)
        } else if let list = state.list, list > 0 {
            let marker = Self.marker(listText)
            let indent = String(repeating: "  ", count: state.listLevel)
            builder.line(indent + marker + " " + StructuredTextBuilder.collapse(text))
        } else {
            builder.endBlock()
            builder.paragraph(text)
        }
    }

    private mutating func endRow() {
        if !paragraph.isEmpty {
            cells.append(StructuredTextBuilder.collapse(paragraph))
            paragraph = ""
        }
        if !inTableBlock {
            builder.endBlock()
            inTableBlock = true
        }
        if cells.contains(where: { !$0.isEmpty }) { builder.line(cells.joined(separator: " | ")) }
        cells = []
    }

    private mutating func endTable() {
        guard inTableBlock else { return }
        builder.endBlock()
        inTableBlock = false
    }

    /// The paragraph's heading level: its outline level, else its style's.
    private func headingLevel() -> Int? {
        if let level = state.outlineLevel { return level < 9 ? level + 1 : nil }
        guard let style = styles[state.style] else { return nil }
        if let level = style.outlineLevel { return level < 9 ? level + 1 : nil }
        return DOCXStyles.level(inName: style.name)
    }

    /// A list item's marker: its list text when that is a number or letter (`1.`, `a)`), else `-`.
    static func marker(_ listText: String) -> String {
        let trimmed = StructuredTextBuilder.collapse(listText)
        guard let first = trimmed.first, first.isNumber || first.isLetter, trimmed.count <= 8 else { return "-" }
        return trimmed
    }

    private static func isLetter(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
    }

    private static func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }

    private static func hex(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - 0x30
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - 0x57
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - 0x37
        default: nil
        }
    }
}
