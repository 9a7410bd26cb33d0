internal import CLibXML2
import Foundation
import SluiceCore

/// PowerPoint presentations (PPTX, Office Open XML), read as ``DOCXExtractor`` reads Word documents: the
/// ZIP container through ``DOCXArchive`` (with its limits on inflation) and each XML part through libxml2,
/// any DTD refused before parsing.
///
/// One section per slide, in the order the presentation lists them (`ppt/presentation.xml`, resolved
/// through its relationships; not the order of the parts' names), its page the slide's number and its
/// heading the slide's title (the `title` or `ctrTitle` placeholder), written first as a Markdown heading
/// line. Then each shape's text in the order of the slide's shape tree (groups included), a paragraph per
/// line and a block per shape; tables a row per line, cells joined by " | "; and the speaker notes last,
/// after "Notes: ". Slide numbers, dates, footers and headers are not text of the slide. Title and author
/// come from `docProps/core.xml`.
///
/// Recognised by content: a ZIP archive holding `ppt/presentation.xml`, whatever its name.
public struct PPTXExtractor: Extractor {
    let limits: DOCXArchive.Limits

    /// - Parameters:
    ///   - maxInflatedBytes: Most bytes inflated from one presentation in all (`extract.docx.max_inflated_mb`).
    ///   - maxCompressionRatio: Most inflated bytes per compressed byte of one part
    ///     (`extract.docx.max_compression_ratio`).
    public init(maxInflatedBytes: Int = 100 << 20, maxCompressionRatio: Double = 200) {
        limits = DOCXArchive.Limits(maxInflatedBytes: maxInflatedBytes, maxCompressionRatio: maxCompressionRatio)
    }

    public var name: String { "pptx" }

    public func accepts(_ input: ExtractionInput) -> Bool {
        OfficePackage.holds("ppt/presentation.xml", in: input.bytes)
    }

    public func extract(_ input: ExtractionInput) throws -> ExtractedText {
        var archive = try DOCXArchive(bytes: input.bytes, limits: limits)
        let presentationPart = "ppt/presentation.xml"
        guard let presentationXML = try archive.part(presentationPart) else {
            throw SluiceError(.unsupportedFormat, "a ZIP archive without \(presentationPart) is not a PPTX")
        }
        let presentation = try DOCXExtractor.parse(presentationXML, name: presentationPart)
        let targets = try OfficeRelationships.of(presentationPart, in: &archive)
        var slideParts: [String] = []
        for entry in presentation.root?.child("sldIdLst")?.children ?? XMLChildren(first: nil)
        where entry.isElement && entry.localName == "sldId" {
            guard let id = entry.attribute("id", namespace: OfficeRelationships.namespace), let part = targets[id]
            else {
                throw SluiceError(.malformed, "\(presentationPart) lists a slide without a relationship")
            }
            slideParts.append(part.path)
        }
        withExtendedLifetime(presentation) {}  // owns the nodes walked above

        var sections: [TextSection] = []
        var firstTitle: String?
        for (index, part) in slideParts.enumerated() {
            guard let bytes = try archive.part(part) else {
                throw SluiceError(.malformed, "\(presentationPart) lists \(part), which the archive does not hold")
            }
            let slide = try DOCXExtractor.parse(bytes, name: part)
            var text = SlideText()
            if let tree = slide.root?.child("cSld")?.child("spTree") { text.visit(tree: tree, notes: false) }
            withExtendedLifetime(slide) {}
            let notesPart = try OfficeRelationships.of(part, in: &archive).values
                .first { $0.type.hasSuffix("/notesSlide") }?.path
            if let notesPart, let notesBytes = try archive.part(notesPart) {
                let notes = try DOCXExtractor.parse(notesBytes, name: notesPart)
                if let tree = notes.root?.child("cSld")?.child("spTree") { text.visit(tree: tree, notes: true) }
                withExtendedLifetime(notes) {}
            }
            if firstTitle == nil, let title = text.title { firstTitle = title }
            guard let section = text.section(page: index + 1) else { continue }
            sections.append(section)
        }
        guard !sections.isEmpty else { throw SluiceError(.emptyDocument, "the PPTX has no text on its slides") }

        var metadata = try OfficePackage.coreProperties(in: &archive)
        metadata["format"] = "pptx"
        metadata["slides"] = String(slideParts.count)
        if metadata["title"] == nil, let firstTitle { metadata["title"] = firstTitle }
        return ExtractedText(sections: sections, metadata: metadata)
    }
}

/// The text of one slide and its notes, as ``PPTXExtractor`` lays it out.
struct SlideText {
    private(set) var title: String?
    private var blocks: [String] = []
    private var notes: [String] = []

    /// Placeholders whose text is not the slide's: numbers, dates, footers, headers and the notes page's
    /// picture of the slide.
    private static let furniture: Set<String> = ["sldNum", "dt", "ftr", "hdr", "sldImg"]

    /// Walks a shape tree (`p:spTree` or a group) in order.
    mutating func visit(tree: xmlNodePtr, notes inNotes: Bool) {
        for shape in tree.children where shape.isElement {
            switch shape.localName {
            case "sp":
                let placeholder = shape.child("nvSpPr")?.child("nvPr")?.child("ph")
                let type = placeholder?.attribute("type") ?? ""
                if Self.furniture.contains(type) { continue }
                guard let body = shape.child("txBody") else { continue }
                let lines = Self.paragraphs(of: body)
                if !inNotes && (type == "title" || type == "ctrTitle") && title == nil {
                    let joined = StructuredTextBuilder.collapse(lines.joined(separator: " "))
                    if !joined.isEmpty { title = joined }
                } else if !lines.isEmpty {
                    if inNotes {
                        notes.append(lines.joined(separator: "\n"))
                    } else {
                        blocks.append(lines.joined(separator: "\n"))
                    }
                }
            case "graphicFrame":
                guard !inNotes, let table = shape.child("graphic")?.child("graphicData")?.child("tbl") else { continue }
                var rows: [String] = []
                for row in table.children where row.isElement && row.localName == "tr" {
                    let cells = row.children.filter { $0.isElement && $0.localName == "tc" }.map { cell in
                        cell.child("txBody").map {
                            StructuredTextBuilder.collapse(Self.paragraphs(of: $0).joined(separator: " "))
                        } ?? ""
                    }
                    if cells.contains(where: { !$0.isEmpty }) { rows.append(cells.joined(separator: " | ")) }
                }
                if !rows.isEmpty { blocks.append(rows.joined(separator: "\n")) }
            case "grpSp":
                visit(tree: shape, notes: inNotes)
            case "AlternateContent":
                // Markup compatibility: one of the alternatives, the first the reader understands.
                if let choice = shape.children.first(where: { $0.isElement && $0.localName == "Choice" }) {
                    visit(tree: choice, notes: inNotes)
                }
            default:
                continue  // pictures, connectors, media: no text
            }
        }
    }

    /// The slide as a section, or nil when it has no text.
    func section(page: Int) -> TextSection? {
        var parts = blocks
        if !notes.isEmpty { parts.append("Notes: " + notes.joined(separator: "\n")) }
        if let title { parts.insert("# " + title, at: 0) }
        guard !parts.isEmpty else { return nil }
        return TextSection(text: parts.joined(separator: "\n\n"), page: page, headingPath: title.map { [$0] } ?? [])
    }

    /// The non-empty lines of a text body: a line per paragraph (`a:p`), line breaks (`a:br`) kept.
    static func paragraphs(of body: xmlNodePtr) -> [String] {
        var lines: [String] = []
        for paragraph in body.children where paragraph.isElement && paragraph.localName == "p" {
            var line = ""
            for run in paragraph.children where run.isElement {
                switch run.localName {
                case "r", "fld": line += run.child("t").map(Self.text(of:)) ?? ""
                case "br": line += "\n"
                default: continue
                }
            }
            for part in line.split(separator: "\n") {
                let trimmed = part.trimmingCharacters(in: .whitespaces)
                if !trimmed.isEmpty { lines.append(trimmed) }
            }
        }
        return lines
    }

    /// The text of an `a:t` element.
    private static func text(of node: xmlNodePtr) -> String {
        node.children.filter(\.isText).map(\.content).joined()
    }
}
