import Foundation
import SluiceCore

/// What the ZIP-based document formats (DOCX, PPTX, XLSX, EPUB) share: recognising the archive by a part
/// it holds, and the title and author of Office documents.
enum OfficePackage {
    /// Whether `bytes` are a ZIP archive holding a part named `part`. The name sits uncompressed in the
    /// central directory at the end of the archive (and in its local header): the last MiB holds the
    /// central directory of any such document, so a large archive is not scanned whole on the caller's
    /// thread.
    static func holds(_ part: String, in bytes: [UInt8]) -> Bool {
        guard bytes.starts(with: [0x50, 0x4B, 0x03, 0x04]) else { return false }
        let name = Array(part.utf8)
        return ByteSearch.contains(Array(bytes.suffix(1 << 20)), name)
            || ByteSearch.contains(Array(bytes.prefix(1 << 16)), name)
    }

    /// `title` and `author` from an Office document's core properties (`docProps/core.xml`), where set.
    static func coreProperties(in archive: inout ZIPContainer) throws -> [String: String] {
        let part = "docProps/core.xml"
        guard let bytes = try archive.part(part) else { return [:] }
        let tree = try ContainerXML.parse(bytes, name: part)
        defer { withExtendedLifetime(tree) {} }  // owns the nodes read below
        var properties: [String: String] = [:]
        for (element, key) in [("title", "title"), ("creator", "author")] {
            if let value = tree.root?.child(element).map(HTMLWalker.text(of:)), !value.isEmpty {
                properties[key] = value
            }
        }
        return properties
    }
}
