internal import CLibXML2
import Foundation
import SluiceCore

/// E-books (EPUB 2 and 3): the ZIP container through `ZIPContainer` (with its limits on inflation), the
/// package document it names (`META-INF/container.xml` → the `.opf`) for the reading order, and each
/// content document of the spine, in that order, as ``HTMLExtractor`` reads HTML (headings become
/// sections with heading paths; lists, tables and image alt text are kept). Each section's metadata names
/// the content document it comes from (`chapter`: its path in the archive). Title, author and language
/// come from the package's Dublin Core metadata.
///
/// A book whose spine documents are encrypted (DRM, listed in `META-INF/encryption.xml`) fails as
/// `encrypted`; obfuscated fonts, which the same file lists, do not matter.
///
/// Recognised by content: a ZIP archive whose `mimetype` entry says `application/epub+zip`, or that holds
/// `META-INF/container.xml`, whatever its name.
public struct EPUBExtractor: Extractor {
    let limits: ZIPContainer.Limits

    /// - Parameters:
    ///   - maxInflatedBytes: Most bytes inflated from one book in all (`extract.zip.max_inflated_mb`).
    ///   - maxCompressionRatio: Most inflated bytes per compressed byte of one part
    ///     (`extract.zip.max_compression_ratio`).
    public init(maxInflatedBytes: Int = 100 << 20, maxCompressionRatio: Double = 200) {
        limits = ZIPContainer.Limits(maxInflatedBytes: maxInflatedBytes, maxCompressionRatio: maxCompressionRatio)
    }

    public var name: String { "epub" }

    public func accepts(_ input: ExtractionInput) -> Bool {
        guard input.bytes.starts(with: [0x50, 0x4B, 0x03, 0x04]) else { return false }
        // The `mimetype` entry comes first, stored: its content sits right after its local header.
        if ByteSearch.contains(Array(input.bytes.prefix(128)), Array("application/epub+zip".utf8)) { return true }
        return OfficePackage.holds(Self.containerPart, in: input.bytes)
    }

    static let containerPart = "META-INF/container.xml"

    public func extract(_ input: ExtractionInput) throws -> ExtractedText {
        var archive = try ZIPContainer(bytes: input.bytes, limits: limits)
        guard let containerXML = try archive.part(Self.containerPart) else {
            throw SluiceError(.unsupportedFormat, "a ZIP archive without \(Self.containerPart) is not an EPUB")
        }
        let container = try ContainerXML.parse(containerXML, name: Self.containerPart)
        let packagePath = container.root?.child("rootfiles")?.children
            .first { $0.isElement && $0.localName == "rootfile" }?.attribute("full-path")
        withExtendedLifetime(container) {}
        guard let packagePath, let packageXML = try archive.part(packagePath) else {
            throw SluiceError(.malformed, "\(Self.containerPart) names no package document the archive holds")
        }
        let package = try ContainerXML.parse(packageXML, name: packagePath)
        let folder = Array(packagePath.split(separator: "/", omittingEmptySubsequences: false).dropLast())
        var manifest: [String: (path: String, type: String)] = [:]
        for item in package.root?.child("manifest")?.children ?? XMLChildren(first: nil)
        where item.isElement && item.localName == "item" {
            guard let id = item.attribute("id"), let href = item.attribute("href") else { continue }
            let path = OfficeRelationships.resolve(href.removingPercentEncoding ?? href, from: folder)
            manifest[id] = (path, item.attribute("media-type") ?? "")
        }
        var chapters: [String] = []
        for reference in package.root?.child("spine")?.children ?? XMLChildren(first: nil)
        where reference.isElement && reference.localName == "itemref" {
            guard let id = reference.attribute("idref"), let item = manifest[id] else { continue }
            // Content documents only (a spine may list other types with fallbacks, which are not read).
            guard item.type == "application/xhtml+xml" || item.type == "text/html" else { continue }
            chapters.append(item.path)
        }
        var metadata = ["format": "epub"]
        if let dublinCore = package.root?.child("metadata") {
            for (element, key) in [("title", "title"), ("creator", "author"), ("language", "language")] {
                let value = dublinCore.child(element).map(HTMLWalker.text(of:)).map(StructuredTextBuilder.collapse)
                if let value, !value.isEmpty { metadata[key] = value }
            }
        }
        withExtendedLifetime(package) {}

        let encrypted = try Self.encryptedParts(in: &archive)
        if let locked = chapters.first(where: encrypted.contains) {
            throw SluiceError(.encrypted, "the EPUB is DRM-protected: \(locked) is encrypted (META-INF/encryption.xml)")
        }
        var sections: [TextSection] = []
        // One budget across the chapters: a spine may list one chapter again and again.
        var budget = input.textBudget()
        for chapter in chapters {
            guard let bytes = try archive.part(chapter) else {
                throw SluiceError(.malformed, "\(packagePath) lists \(chapter), which the archive does not hold")
            }
            let tree = try XMLTree.html(bytes, encoding: HTMLSniffer.encoding(of: bytes))
            var walker = HTMLWalker(budget: budget)
            if let root = tree.root { walker.visit(root, depth: 0) }
            withExtendedLifetime(tree) {}
            let found = try walker.finish()
            budget = walker.budget
            try budget.charge(found.count * (chapter.utf8.count + 7))  // each section's `chapter`
            for var section in found {
                section.metadata["chapter"] = chapter
                sections.append(section)
            }
        }
        guard !sections.isEmpty else { throw SluiceError(.emptyDocument, "the EPUB has no text in its spine") }
        metadata["chapters"] = String(chapters.count)
        return ExtractedText(sections: sections, metadata: metadata)
    }

    /// The parts `META-INF/encryption.xml` says are encrypted, except fonts obfuscated by the IDPF or Adobe
    /// algorithms (which readers undo without a key).
    static func encryptedParts(in archive: inout ZIPContainer) throws -> Set<String> {
        let part = "META-INF/encryption.xml"
        guard let bytes = try archive.part(part) else { return [] }
        let tree = try ContainerXML.parse(bytes, name: part)
        defer { withExtendedLifetime(tree) {} }
        let obfuscations: Set<String> = ["http://www.idpf.org/2008/embedding", "http://ns.adobe.com/pdf/enc#RC"]
        var parts: Set<String> = []
        for data in tree.root?.children ?? XMLChildren(first: nil)
        where data.isElement && data.localName == "EncryptedData" {
            let algorithm = data.child("EncryptionMethod")?.attribute("Algorithm") ?? ""
            guard !obfuscations.contains(algorithm),
                let uri = data.child("CipherData")?.child("CipherReference")?.attribute("URI")
            else { continue }
            // URIs are relative to the container's root.
            parts.insert(OfficeRelationships.resolve(uri.removingPercentEncoding ?? uri, from: []))
        }
        return parts
    }
}
