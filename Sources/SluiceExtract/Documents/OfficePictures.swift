internal import CLibXML2
import SluiceCore

/// The pictures of a DOCX or PPTX (`word/media/…`, `ppt/media/…`), in the document's order, as its XML
/// refers to them (`a:blip r:embed`, VML `v:imagedata r:id`) through the part's relationships. The
/// container's limits hold as for the text (`extract.zip.*`).
package enum OfficePictures {
    /// The pictures `selection` takes from the document read by the extractor named `extractor` (`docx` or
    /// `pptx`; another returns none).
    ///
    /// - Throws: the container's errors (``SluiceError/Code/zipBomb``, ``SluiceError/Code/xmlEntities``,
    ///   ``SluiceError/Code/malformed``).
    package static func list(
        _ bytes: [UInt8],
        extractor: String,
        limits: PipelineConfiguration.Extract.ZIP,
        selection: PictureSelection
    ) throws -> PictureSelection.Listing {
        var archive = try ZIPContainer(
            bytes: bytes,
            limits: ZIPContainer.Limits(
                maxInflatedBytes: Int(limits.maxInflatedMB * 1_048_576),
                maxCompressionRatio: limits.maxCompressionRatio
            )
        )
        var listing = PictureSelection.Listing()
        switch extractor {
        case "docx": try document(&archive, into: &listing, selection: selection)
        case "pptx": try slides(&archive, into: &listing, selection: selection)
        default: break
        }
        return listing
    }

    /// A Word document's pictures, each placed after its paragraph (or the nearest one before it with text).
    private static func document(
        _ archive: inout ZIPContainer,
        into listing: inout PictureSelection.Listing,
        selection: PictureSelection
    ) throws {
        let part = "word/document.xml"
        guard let xml = try archive.part(part) else { return }
        let tree = try ContainerXML.parse(xml, name: part)
        let targets = try OfficeRelationships.of(part, in: &archive)
        var found: [(id: String, place: EmbeddedPicture.Place)] = []
        var last: [String] = []
        func visit(_ node: xmlNodePtr, depth: Int) {
            guard depth < 256 else { return }
            for child in node.children where child.isElement {
                guard child.localName == "p" else {
                    visit(child, depth: depth + 1)
                    continue
                }
                let words = paragraphText(child).split(whereSeparator: \.isWhitespace).map(String.init)
                if !words.isEmpty { last = Array(words.suffix(Self.anchorWords)) }
                for id in references(in: child) { found.append((id, last.isEmpty ? .start : .after(words: last))) }
            }
        }
        if let body = tree.root?.child("body") { visit(body, depth: 0) }
        withExtendedLifetime(tree) {}  // owns the nodes walked above
        try take(found, targets: targets, from: &archive, into: &listing, selection: selection)
    }

    /// A presentation's pictures, each on its slide (in the order the presentation lists them).
    private static func slides(
        _ archive: inout ZIPContainer,
        into listing: inout PictureSelection.Listing,
        selection: PictureSelection
    ) throws {
        let part = "ppt/presentation.xml"
        guard let xml = try archive.part(part) else { return }
        let presentation = try ContainerXML.parse(xml, name: part)
        let slideTargets = try OfficeRelationships.of(part, in: &archive)
        var slideParts: [String] = []
        for entry in presentation.root?.child("sldIdLst")?.children ?? XMLChildren(first: nil)
        where entry.isElement && entry.localName == "sldId" {
            if let id = entry.attribute("id", namespace: OfficeRelationships.namespace), let target = slideTargets[id] {
                slideParts.append(target.path)
            }
        }
        withExtendedLifetime(presentation) {}
        for (index, slidePart) in slideParts.enumerated() {
            guard let slideXML = try archive.part(slidePart) else { continue }
            let slide = try ContainerXML.parse(slideXML, name: slidePart)
            let ids = slide.root.map { references(in: $0) } ?? []
            withExtendedLifetime(slide) {}
            guard !ids.isEmpty else { continue }
            let targets = try OfficeRelationships.of(slidePart, in: &archive)
            try take(
                ids.map { ($0, .page(index + 1)) },
                targets: targets,
                from: &archive,
                into: &listing,
                selection: selection
            )
        }
    }

    /// Reads the parts the references name (each once per place) and keeps those the selection takes.
    private static func take(
        _ found: [(id: String, place: EmbeddedPicture.Place)],
        targets: [String: OfficeRelationships.Target],
        from archive: inout ZIPContainer,
        into listing: inout PictureSelection.Listing,
        selection: PictureSelection
    ) throws {
        var seen: Set<String> = []
        for (id, place) in found {
            guard let target = targets[id], target.type.hasSuffix("/image"),
                seen.insert(target.path + "\u{0}" + "\(place)").inserted
            else { continue }
            // Past the limit a picture is counted, not inflated.
            if listing.full(selection) {
                listing.overLimit += 1
                continue
            }
            guard let bytes = try archive.part(target.path) else { continue }
            listing.consider(bytes, name: target.path, place: place, selection: selection)
        }
    }

    /// The relationship ids of the pictures under `node`, in order: DrawingML's `a:blip r:embed` and VML's
    /// `v:imagedata r:id`. The fallback copies of alternate content are left out (the same picture twice).
    private static func references(in node: xmlNodePtr) -> [String] {
        var ids: [String] = []
        func walk(_ node: xmlNodePtr, depth: Int) {
            guard depth < 256 else { return }
            for child in node.children where child.isElement {
                switch child.localName {
                case "blip":
                    if let id = child.attribute("embed", namespace: OfficeRelationships.namespace) { ids.append(id) }
                case "imagedata":
                    if let id = child.attribute("id", namespace: OfficeRelationships.namespace) { ids.append(id) }
                case "Fallback":
                    break
                default:
                    walk(child, depth: depth + 1)
                }
            }
        }
        walk(node, depth: 0)
        return ids
    }

    /// A paragraph's text as far as its words go: its runs' `w:t` (deleted text left out).
    private static func paragraphText(_ node: xmlNodePtr) -> String {
        var out = ""
        func walk(_ node: xmlNodePtr, depth: Int) {
            guard depth < 256 else { return }
            for child in node.children where child.isElement {
                switch child.localName {
                case "t": out += HTMLWalker.text(of: child)
                case "tab", "br", "cr": out += " "
                case "del", "delText", "instrText", "Fallback", "txbxContent": break
                default: walk(child, depth: depth + 1)
                }
            }
        }
        walk(node, depth: 0)
        return out
    }

    /// How many of a paragraph's last words place a picture after it.
    static let anchorWords = 8
}
