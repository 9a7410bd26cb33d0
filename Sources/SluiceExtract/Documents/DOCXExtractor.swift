import Foundation
import SluiceCore

/// Word documents (DOCX, Office Open XML): the ZIP container through `ZIPArchive` (zlib), its XML parts
/// through libxml2. Headings (by outline level or `heading N` style) become sections with heading paths
/// and Markdown heading lines; lists, tables (a row per line) and paragraphs are kept; footnotes and
/// endnotes follow the body (`DOCXNotes`); the title and author come from `docProps/core.xml`.
///
/// Recognised by content: a ZIP archive (`PK\u{3}\u{4}`) holding `word/document.xml`, whatever its name.
///
/// Limits, each failing the document alone with a precise reason: inflation is metered while it runs
/// (`ZIPContainer/Limits`: total size and compression ratio, ``SluiceError/Code/zipBomb``); an XML
/// part that declares a DTD (`<!DOCTYPE`, where entities live) is refused before parsing
/// (``SluiceError/Code/xmlEntities``) — OOXML parts never have one, so no entity is ever expanded,
/// and libxml2 runs without network access, DTD loading or entity substitution.
public struct DOCXExtractor: Extractor {
    let limits: ZIPContainer.Limits

    /// - Parameters:
    ///   - maxInflatedBytes: Most bytes inflated from one document in all.
    ///   - maxCompressionRatio: Most inflated bytes per compressed byte of one part.
    public init(maxInflatedBytes: Int = 100 << 20, maxCompressionRatio: Double = 200) {
        limits = ZIPContainer.Limits(maxInflatedBytes: maxInflatedBytes, maxCompressionRatio: maxCompressionRatio)
    }

    public var name: String { "docx" }

    public func accepts(_ input: ExtractionInput) -> Bool { OfficePackage.holds("word/document.xml", in: input.bytes) }

    public func extract(_ input: ExtractionInput) throws -> ExtractedText {
        var archive = try ZIPContainer(bytes: input.bytes, limits: limits)
        guard let documentXML = try archive.part("word/document.xml") else {
            throw SluiceError(.unsupportedFormat, "a ZIP archive without word/document.xml is not a DOCX")
        }
        let document = try ContainerXML.parse(documentXML, name: "word/document.xml")
        // The parts the body relies on, through its relationships (any name a producer chose), else by the
        // names Word, LibreOffice and pandoc give them.
        let related = try OfficeRelationships.of("word/document.xml", in: &archive)
        func part(_ type: String, else name: String) -> String {
            related.values.first { $0.type.hasSuffix("/" + type) }?.path ?? name
        }
        let stylesPart = part("styles", else: "word/styles.xml")
        let numberingPart = part("numbering", else: "word/numbering.xml")
        let styles = try archive.part(stylesPart).map { try ContainerXML.parse($0, name: stylesPart) }
        let numbering = try archive.part(numberingPart).map { try ContainerXML.parse($0, name: numberingPart) }
        let core = try OfficePackage.coreProperties(in: &archive)

        guard let body = document.root?.child("body") else {
            throw SluiceError(.malformed, "word/document.xml has no w:body")
        }
        var walker = DOCXBodyWalker(
            styles: DOCXStyles(styles: styles, numbering: numbering),
            budget: input.textBudget()
        )
        walker.visit(body: body)
        for kind in DOCXNotes.Kind.allCases {
            let name = part(kind.relationship, else: kind.part)
            guard let bytes = try archive.part(name) else { continue }
            let notes = try ContainerXML.parse(bytes, name: name)  // owns the nodes: alive while they are walked
            if let root = notes.root { walker.visit(notes: kind, root: root) }
            withExtendedLifetime(notes) {}
        }
        withExtendedLifetime(document) {}  // owns the body's nodes, walked above
        let sections = try walker.finish()
        guard !sections.isEmpty else { throw SluiceError(.emptyDocument, "the DOCX has no text") }
        var metadata = core
        metadata["format"] = "docx"
        if metadata["title"] == nil, let title = walker.title, !title.isEmpty { metadata["title"] = title }
        return ExtractedText(sections: sections, metadata: metadata)
    }
}
