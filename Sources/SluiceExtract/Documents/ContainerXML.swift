import SluiceCore

/// The XML parts of ZIP-based documents (DOCX, PPTX, XLSX, EPUB): parsed by libxml2 only after any DTD
/// (where entities would be declared) is refused, so no entity is ever expanded.
enum ContainerXML {
    /// Parses an XML part, refusing any DTD before libxml2 sees it.
    static func parse(_ bytes: [UInt8], name: String) throws -> XMLTree {
        try refuseDTD(bytes, name: name)
        let tree = try XMLTree.xml(bytes, name: name)
        if tree.hasDTD { throw SluiceError(.xmlEntities, "\(name) declares a DTD; entity expansion is refused") }
        return tree
    }

    /// Refuses an XML part that is UTF-16 or declares a DTD (where entities would be declared).
    static func refuseDTD(_ bytes: [UInt8], name: String) throws {
        if bytes.starts(with: [0xFF, 0xFE]) || bytes.starts(with: [0xFE, 0xFF]) {
            throw SluiceError(.unsupportedFormat, "\(name) is UTF-16; the parts of ZIP-based documents are UTF-8")
        }
        for marker in ["<!DOCTYPE", "<!ENTITY"] {
            if let offset = ByteSearch.firstIndex(of: Array(marker.utf8), in: bytes) {
                throw SluiceError(
                    .xmlEntities,
                    "\(name) declares a DTD (\(marker) at byte \(offset)); the parts of ZIP-based documents never do, and entity expansion is refused (billion-laughs protection)"
                )
            }
        }
    }
}
