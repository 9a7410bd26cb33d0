internal import CLibXML2
import Foundation
import SluiceCore

/// What the OpenDocument formats (ODT, ODS, ODP) share: recognising the package by its `mimetype` entry,
/// reading `content.xml` (through ``ZIPContainer``, with the limits of every ZIP-based format,
/// `extract.zip.*`, and ``ContainerXML``, any DTD refused before parsing), and the title and author of
/// `meta.xml`.
enum OpenDocumentPackage {
    /// The kinds of package, by the media type in their `mimetype` entry.
    enum Kind: String {
        case text = "application/vnd.oasis.opendocument.text"
        case spreadsheet = "application/vnd.oasis.opendocument.spreadsheet"
        case presentation = "application/vnd.oasis.opendocument.presentation"

        /// The format's short name (`odt`, `ods`, `odp`): the extractor's and the metadata's `format`.
        var format: String {
            switch self {
            case .text: "odt"
            case .spreadsheet: "ods"
            case .presentation: "odp"
            }
        }

        /// The element of `office:body` that holds the content.
        var bodyElement: String {
            switch self {
            case .text: "text"
            case .spreadsheet: "spreadsheet"
            case .presentation: "presentation"
            }
        }
    }

    /// The package's kind, by content: a ZIP archive whose first entry is `mimetype`, stored, as the
    /// OpenDocument specification requires (its content then sits right after the entry's local header,
    /// at byte 38). Templates (`…text-template`) are read as their documents.
    static func kind(of bytes: [UInt8]) -> Kind? {
        let header: [UInt8] = [0x50, 0x4B, 0x03, 0x04]
        guard bytes.count > 38, bytes.starts(with: header) else { return nil }
        let nameLength = Int(bytes[26]) | Int(bytes[27]) << 8
        let extraLength = Int(bytes[28]) | Int(bytes[29]) << 8
        guard nameLength == 8, Array(bytes[30..<38]) == Array("mimetype".utf8) else { return nil }
        // Stored (method 0): its compressed size is its length.
        let method = Int(bytes[8]) | Int(bytes[9]) << 8
        let size = Int(bytes[18]) | Int(bytes[19]) << 8 | Int(bytes[20]) << 16 | Int(bytes[21]) << 24
        let start = 38 + extraLength
        guard method == 0, size <= 100, start + size <= bytes.count else { return nil }
        let type = String(decoding: bytes[start..<(start + size)], as: UTF8.self)
        for kind in [Kind.text, .spreadsheet, .presentation] where type.hasPrefix(kind.rawValue) {
            // `…text`, `…text-template`, `…text-master`; not `…textual`.
            let rest = type.dropFirst(kind.rawValue.count)
            if rest.isEmpty || rest.hasPrefix("-") { return kind }
        }
        return nil
    }

    /// The parsed `content.xml` of a package and the element of its body that holds the content
    /// (`office:text`, `office:spreadsheet`, `office:presentation`).
    /// - Throws: ``SluiceError/Code/malformed`` when the part is missing or has no such body,
    ///   ``SluiceError/Code/xmlEntities`` for a DTD, ``SluiceError/Code/zipBomb`` past a limit.
    static func content(_ kind: Kind, in archive: inout ZIPContainer) throws -> (tree: XMLTree, body: xmlNodePtr) {
        let part = "content.xml"
        guard let bytes = try archive.part(part) else {
            throw SluiceError(
                .malformed,
                "the \(kind.format.uppercased()) package has no content.xml (its mimetype says \(kind.rawValue))"
            )
        }
        let tree = try ContainerXML.parse(bytes, name: part)
        guard let body = tree.root?.child("body")?.child(kind.bodyElement) else {
            throw SluiceError(.malformed, "content.xml has no office:body/office:\(kind.bodyElement)")
        }
        return (tree, body)
    }

    /// `title` and `author` from the package's `meta.xml` (`dc:title`, `dc:creator`, else
    /// `meta:initial-creator`), where set.
    static func metadata(in archive: inout ZIPContainer) throws -> [String: String] {
        let part = "meta.xml"
        guard let bytes = try archive.part(part) else { return [:] }
        let tree = try ContainerXML.parse(bytes, name: part)
        defer { withExtendedLifetime(tree) {} }  // owns the nodes read below
        guard let meta = tree.root?.child("meta") else { return [:] }
        var properties: [String: String] = [:]
        for (elements, key) in [(["title"], "title"), (["creator", "initial-creator"], "author")] {
            for element in elements {
                if let value = meta.child(element).map(HTMLWalker.text(of:)).map(StructuredTextBuilder.collapse),
                    !value.isEmpty
                {
                    properties[key] = value
                    break
                }
            }
        }
        return properties
    }

    /// The extraction shared by the three formats: the archive opened with `limits`, `content.xml` parsed,
    /// `read` given its body, then the package's metadata with `format` added.
    static func extract(
        _ kind: Kind,
        from input: ExtractionInput,
        limits: ZIPContainer.Limits,
        _ read: (xmlNodePtr, inout ZIPContainer) throws -> (sections: [TextSection], metadata: [String: String])
    ) throws -> ExtractedText {
        var archive = try ZIPContainer(bytes: input.bytes, limits: limits)
        let content = try Self.content(kind, in: &archive)
        let (sections, found) = try read(content.body, &archive)
        withExtendedLifetime(content.tree) {}  // owns the body's nodes, walked above
        guard !sections.isEmpty else {
            throw SluiceError(.emptyDocument, "the \(kind.format.uppercased()) has no text")
        }
        var metadata = try Self.metadata(in: &archive)
        for (key, value) in found where metadata[key] == nil { metadata[key] = value }
        metadata["format"] = kind.format
        return ExtractedText(sections: sections, metadata: metadata)
    }
}
