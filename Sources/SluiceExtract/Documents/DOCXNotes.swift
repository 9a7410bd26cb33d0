internal import CLibXML2

/// A DOCX's footnotes and endnotes (the parts the body's relationships name, usually `word/footnotes.xml`
/// and `word/endnotes.xml`): numbered in the order the
/// body first refers to them, as Word shows them (footnotes 1, 2, 3…, endnotes i, ii, iii…). The body's
/// reference becomes a marker (`[1]`, `[i]`) and the notes follow the body in sections of their own
/// ("Footnotes", "Endnotes"), each note a paragraph starting with its marker.
package struct DOCXNotes {
    enum Kind: CaseIterable {
        case footnote, endnote

        /// The part that holds these notes by its usual name, the type of the body's relationship to it
        /// (which names it in any document), and each note's element in it.
        var part: String { self == .footnote ? "word/footnotes.xml" : "word/endnotes.xml" }
        var relationship: String { self == .footnote ? "footnotes" : "endnotes" }
        var element: String { self == .footnote ? "footnote" : "endnote" }
        var heading: String { self == .footnote ? "Footnotes" : "Endnotes" }

        /// The kind a body element (`w:footnoteReference`, `w:endnoteReference`) refers to.
        init?(reference: String) {
            switch reference {
            case "footnoteReference": self = .footnote
            case "endnoteReference": self = .endnote
            default: return nil
            }
        }
    }

    /// Each kind's note ids in the order of their first reference.
    private var order: [Kind: [String]] = [:]
    private var numbers: [Kind: [String: Int]] = [:]

    /// The marker for a reference to note `id`, numbering the note at its first reference.
    mutating func marker(_ kind: Kind, id: String) -> String {
        if let number = numbers[kind]?[id] { return Self.label(kind, number) }
        let number = (order[kind]?.count ?? 0) + 1
        order[kind, default: []].append(id)
        numbers[kind, default: [:]][id] = number
        return Self.label(kind, number)
    }

    /// The notes of `kind` in `root` (the part's root element) as (marker, note element) pairs: those the body
    /// refers to in the order of reference, then any others in the part's order (numbered after them).
    /// Separators and continuation notices (notes with a `w:type`) are not notes.
    mutating func notes(_ kind: Kind, in root: xmlNodePtr) -> [(marker: String, note: xmlNodePtr)] {
        var byID: [String: xmlNodePtr] = [:]
        var unreferenced: [String] = []
        for node in root.children where node.isElement && node.localName == kind.element {
            guard node.attribute("type") == nil || node.attribute("type") == "normal",
                let id = node.attribute("id"), byID[id] == nil
            else { continue }
            byID[id] = node
            if numbers[kind]?[id] == nil { unreferenced.append(id) }
        }
        let referenced = (order[kind] ?? []).filter { byID[$0] != nil }
        return (referenced + unreferenced).map { id in (marker(kind, id: id), byID[id]!) }
    }

    private static func label(_ kind: Kind, _ number: Int) -> String {
        "[" + (kind == .footnote ? String(number) : roman(number)) + "]"
    }

    /// Lower-case Roman numerals (Word's default for endnotes); plain digits past 3,999.
    package static func roman(_ number: Int) -> String {
        guard number > 0 && number < 4000 else { return String(number) }
        let values = [1000, 900, 500, 400, 100, 90, 50, 40, 10, 9, 5, 4, 1]
        let symbols = ["m", "cm", "d", "cd", "c", "xc", "l", "xl", "x", "ix", "v", "iv", "i"]
        var rest = number
        var out = ""
        for (value, symbol) in zip(values, symbols) {
            while rest >= value {
                out += symbol
                rest -= value
            }
        }
        return out
    }
}
