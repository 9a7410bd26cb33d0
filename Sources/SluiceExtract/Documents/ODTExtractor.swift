internal import CLibXML2
import Foundation
import SluiceCore

/// OpenDocument text documents (ODT, as LibreOffice Writer saves them), read as ``DOCXExtractor`` reads
/// Word documents: the ZIP container through `ZIPContainer` (with the limits of every ZIP-based format,
/// `extract.zip.*`) and `content.xml` through libxml2, any DTD refused before parsing.
///
/// Headings (`text:h`, by outline level) become sections with heading paths (the chunks' `headings`) and
/// Markdown heading lines; lists (numbered where their style says so), tables (a row per line) and
/// paragraphs are kept; notes follow the body (`ODTBodyWalker`). The title and author come from
/// `meta.xml`.
///
/// Recognised by content: a ZIP archive whose first entry, `mimetype`, says
/// `application/vnd.oasis.opendocument.text`, whatever its name.
public struct ODTExtractor: Extractor {
    let limits: ZIPContainer.Limits

    /// - Parameters:
    ///   - maxInflatedBytes: Most bytes inflated from one document in all (`extract.zip.max_inflated_mb`).
    ///   - maxCompressionRatio: Most inflated bytes per compressed byte of one part
    ///     (`extract.zip.max_compression_ratio`).
    public init(maxInflatedBytes: Int = 100 << 20, maxCompressionRatio: Double = 200) {
        limits = ZIPContainer.Limits(maxInflatedBytes: maxInflatedBytes, maxCompressionRatio: maxCompressionRatio)
    }

    public var name: String { "odt" }

    public func accepts(_ input: ExtractionInput) -> Bool { OpenDocumentPackage.kind(of: input.bytes) == .text }

    public func extract(_ input: ExtractionInput) throws -> ExtractedText {
        try OpenDocumentPackage.extract(.text, from: input, limits: limits) { body, archive in
            // List styles live in content.xml's automatic styles and in styles.xml.
            var roots = [body]
            if let root = body.pointee.doc.flatMap({ xmlDocGetRootElement($0) }) { roots = [root] }
            let styles = try archive.part("styles.xml").map { try ContainerXML.parse($0, name: "styles.xml") }
            if let root = styles?.root { roots.append(root) }
            var walker = ODTBodyWalker(
                listStyles: OpenDocumentText.numberedListLevels(in: roots),
                budget: input.textBudget()
            )
            withExtendedLifetime(styles) {}
            walker.visit(body)
            return (try walker.finish(), [:])
        }
    }
}
