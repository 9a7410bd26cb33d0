internal import CLibXML2
import Foundation
import SluiceCore

/// PowerPoint presentations (PPTX, Office Open XML), read as ``DOCXExtractor`` reads Word documents: the
/// ZIP container through `ZIPContainer` (with its limits on inflation) and each XML part through libxml2,
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
    let limits: ZIPContainer.Limits

    /// - Parameters:
    ///   - maxInflatedBytes: Most bytes inflated from one presentation in all (`extract.zip.max_inflated_mb`).
    ///   - maxCompressionRatio: Most inflated bytes per compressed byte of one part
    ///     (`extract.zip.max_compression_ratio`).
    public init(maxInflatedBytes: Int = 100 << 20, maxCompressionRatio: Double = 200) {
        limits = ZIPContainer.Limits(maxInflatedBytes: maxInflatedBytes, maxCompressionRatio: maxCompressionRatio)
    }

    public var name: String { "pptx" }

    public func accepts(_ input: ExtractionInput) -> Bool {
        OfficePackage.holds("ppt/presentation.xml", in: input.bytes)
    }

    public func extract(_ input: ExtractionInput) throws -> ExtractedText {
        var archive = try ZIPContainer(bytes: input.bytes, limits: limits)
        let presentationPart = "ppt/presentation.xml"
        guard let presentationXML = try archive.part(presentationPart) else {
            throw SluiceError(.unsupportedFormat, "a ZIP archive without \(presentationPart) is not a PPTX")
        }
        let presentation = try ContainerXML.parse(presentationXML, name: presentationPart)
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
        // One budget across the slides: a presentation may list one slide again and again.
        var budget = input.textBudget()
        for (index, part) in slideParts.enumerated() {
            guard let bytes = try archive.part(part) else {
                throw SluiceError(.malformed, "\(presentationPart) lists \(part), which the archive does not hold")
            }
            let slide = try ContainerXML.parse(bytes, name: part)
            var text = SlideText()
            if let tree = slide.root?.child("cSld")?.child("spTree") { text.visit(tree: tree, notes: false) }
            withExtendedLifetime(slide) {}
            let notesPart = try OfficeRelationships.of(part, in: &archive).values
                .first { $0.type.hasSuffix("/notesSlide") }?.path
            if let notesPart, let notesBytes = try archive.part(notesPart) {
                let notes = try ContainerXML.parse(notesBytes, name: notesPart)
                if let tree = notes.root?.child("cSld")?.child("spTree") { text.visit(tree: tree, notes: true) }
                withExtendedLifetime(notes) {}
            }
            if firstTitle == nil, let title = text.title { firstTitle = title }
            guard let section = text.section(page: index + 1) else { continue }
            try budget.charge(section)
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
