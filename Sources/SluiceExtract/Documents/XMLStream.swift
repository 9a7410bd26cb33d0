internal import CLibXML2
import Foundation
import SluiceCore

/// Reads the elements of an XML part one at a time with libxml2's streaming reader (`xmlTextReader`): only
/// the element being handed out is a tree (`xmlTextReaderExpand`), freed as the reader moves past it. A
/// worksheet of a million rows then costs the memory of one row, where a whole tree of it (``XMLTree``)
/// took a gigabyte for an 11.5 MB workbook (issue 37).
///
/// The part is held to what ``ContainerXML/parse(_:name:)`` requires (UTF-8, no DTD: no entity is ever
/// expanded) and read with the same options: no network, no DTD loading, no entity substitution.
enum XMLStream {
    /// Calls `body` with every element named `element` (local name) at `depth` (the root is at 0), in
    /// order; with `parent`, only those whose enclosing element at `depth - 1` has that local name. The
    /// node and its subtree are valid only during the call.
    /// - Throws: ``SluiceError/Code/malformed`` when the part is not well-formed XML,
    ///   ``SluiceError/Code/xmlEntities`` for a DTD, and what `body` throws.
    static func elements(
        _ element: String,
        depth: Int32,
        parent: String? = nil,
        in bytes: [UInt8],
        name: String,
        _ body: (xmlNodePtr) throws -> Void
    ) throws {
        try ContainerXML.refuseDTD(bytes, name: name)
        guard !bytes.isEmpty else { throw SluiceError(.malformed, "\(name) is empty") }
        _ = XMLTree.initialised
        sluice_xml_silence_errors()
        let options = Int32(
            XML_PARSE_NONET.rawValue | XML_PARSE_NOERROR.rawValue | XML_PARSE_NOWARNING.rawValue
                | XML_PARSE_COMPACT.rawValue | XML_PARSE_NOCDATA.rawValue
        )
        xmlResetLastError()
        // The reader reads the buffer in place: it must not outlive it.
        try bytes.withUnsafeBufferPointer { buffer in
            let reader = buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: buffer.count) {
                xmlReaderForMemory($0, Int32(buffer.count), name, nil, options)
            }
            guard let reader else { throw malformed(name) }
            defer { xmlFreeTextReader(reader) }
            let elementType = Int32(XML_READER_TYPE_ELEMENT.rawValue)
            var inParent = parent == nil
            var status = xmlTextReaderRead(reader)
            while status == 1 {
                if xmlTextReaderNodeType(reader) == elementType {
                    let level = xmlTextReaderDepth(reader)
                    if level == depth && inParent && localName(reader) == element {
                        guard let node = xmlTextReaderExpand(reader) else { throw malformed(name) }
                        try body(node)
                        status = xmlTextReaderNext(reader)  // past the element's subtree, which is freed
                        continue
                    }
                    if let parent, level == depth - 1 { inParent = localName(reader) == parent }
                }
                status = xmlTextReaderRead(reader)
            }
            guard status == 0 else { throw malformed(name) }
        }
    }

    private static func localName(_ reader: xmlTextReaderPtr) -> String {
        xmlTextReaderConstLocalName(reader).map { String(cString: $0) } ?? ""
    }

    private static func malformed(_ name: String) -> SluiceError {
        SluiceError(.malformed, "\(name) is not well-formed XML: \(XMLTree.lastError())")
    }
}
