import Foundation
import SluiceCore

/// Rich Text Format documents (RTF, as Word, WordPad, LibreOffice and TextEdit write them), read by
/// `RTFReader` in one pass over the bytes, in Swift.
///
/// Control words and groups are dropped; destinations that are not text are skipped (font, colour and
/// style tables, `\info`, pictures, objects, headers and footers, field instructions, bookmarks,
/// comments, and any `{\*\…}` group the reader does not know); `\uN` is decoded (its `\ucN` fallback
/// characters skipped, surrogate pairs joined), and `\'hh` by the code page in force (`RTFCodePage`:
/// Windows-1252 built in; 437, 850, 852, 866, 874, 932, 936, 949, 950, 1250–1258 and Mac Roman through
/// iconv). `\par` ends a paragraph and `\line` breaks a line; a paragraph of outline level N
/// (`\outlinelevel`, its own or its style's) or of a `heading N` style is a heading and starts a section,
/// with its heading path (the chunks' `headings`) and a Markdown heading line; list paragraphs become
/// `1.` / `-` lines, table rows lines of cells joined by ` | `, and footnotes follow the body under
/// "Notes". The title and author come from `\info`.
///
/// Recognised by content: the signature `{\rtf` at the start, whatever the file's name. Limits, each
/// failing the document alone with its reason: groups nested deeper than 256 levels (`too-deep`), text
/// past `extract.max_text_mb` (`text-too-large`), and a document with no text (only pictures or
/// formatting: `empty-document`).
public struct RTFExtractor: Extractor {
    public init() {}

    public var name: String { "rtf" }

    public func accepts(_ input: ExtractionInput) -> Bool { FormatSniffer.sniff(input.bytes) == .rtf }

    public func extract(_ input: ExtractionInput) throws -> ExtractedText {
        guard FormatSniffer.sniff(input.bytes) == .rtf else {
            throw SluiceError(.unsupportedFormat, "the content does not start with {\\rtf: not an RTF document")
        }
        var reader = RTFReader(bytes: input.bytes, budget: input.textBudget())
        let sections = try reader.read()
        guard !sections.isEmpty else {
            throw SluiceError(.emptyDocument, "the RTF has no text (only formatting, pictures or objects)")
        }
        var metadata = ["format": "rtf"]
        for (key, value) in reader.info {
            let value = StructuredTextBuilder.collapse(value)
            if !value.isEmpty { metadata[key] = value }
        }
        return ExtractedText(sections: sections, metadata: metadata)
    }
}
