internal import CLibXML2

/// What the DOCX's `styles.xml` and `numbering.xml` say about paragraphs: which styles are headings
/// (and of what level), and which lists are numbered.
struct DOCXStyles {
    private struct Style {
        var name: String
        var outlineLevel: Int?
        var basedOn: String?
    }

    private var styles: [String: Style] = [:]
    /// numId → (ilvl → numFmt).
    private var formats: [String: [Int: String]] = [:]

    init(styles: XMLTree?, numbering: XMLTree?) {
        if let root = styles?.root {
            for style in root.children where style.isElement && style.localName == "style" {
                guard let id = style.attribute("styleId") else { continue }
                let name = style.child("name")?.attribute("val") ?? id
                let outline = style.child("pPr")?.child("outlineLvl")?.attribute("val").flatMap { Int($0) }
                self.styles[id] = Style(
                    name: name,
                    outlineLevel: outline,
                    basedOn: style.child("basedOn")?.attribute("val")
                )
            }
        }
        if let root = numbering?.root {
            var abstract: [String: [Int: String]] = [:]
            for node in root.children where node.isElement && node.localName == "abstractNum" {
                guard let id = node.attribute("abstractNumId") else { continue }
                var levels: [Int: String] = [:]
                for level in node.children where level.isElement && level.localName == "lvl" {
                    if let ilvl = level.attribute("ilvl").flatMap({ Int($0) }),
                        let format = level.child("numFmt")?.attribute("val")
                    {
                        levels[ilvl] = format
                    }
                }
                abstract[id] = levels
            }
            for node in root.children where node.isElement && node.localName == "num" {
                if let id = node.attribute("numId"), let abstractID = node.child("abstractNumId")?.attribute("val") {
                    formats[id] = abstract[abstractID] ?? [:]
                }
            }
        }
    }

    /// The heading level (1 = outermost) of a paragraph style, if it is a heading: its outline level,
    /// inherited along `basedOn`, or a name `heading N` (style names are not translated; ids may be).
    func headingLevel(styleID: String) -> Int? {
        var id: String? = styleID
        var hops = 0
        while let current = id, hops < 16 {
            guard let style = styles[current] else { break }
            if let outline = style.outlineLevel { return outline < 9 ? outline + 1 : nil }
            if let level = Self.level(inName: style.name) { return level }
            id = style.basedOn
            hops += 1
        }
        return styles[styleID] == nil ? Self.level(inName: styleID) : nil
    }

    /// Whether a style is the document title.
    func isTitle(styleID: String) -> Bool {
        (styles[styleID]?.name ?? styleID).lowercased() == "title"
    }

    /// Whether a list level is numbered (decimal, letters, roman) rather than bulleted.
    func isNumbered(numID: String, level: Int) -> Bool {
        guard let format = formats[numID]?[level] else { return false }
        return format != "bullet" && format != "none"
    }

    /// `heading 2`, `Heading2` → 2.
    static func level(inName name: String) -> Int? {
        let lower = name.lowercased()
        guard lower.hasPrefix("heading") else { return nil }
        let digits = lower.dropFirst("heading".count).drop { $0 == " " }
        guard let level = Int(digits), (1...9).contains(level) else { return nil }
        return level
    }
}
