internal import CLibXML2
import Foundation
import SluiceCore

/// A parsed libxml2 document (XML or HTML), freed when the value goes away.
///
/// Parsing never touches the network (`XML_PARSE_NONET` / `HTML_PARSE_NONET`), never loads a DTD and
/// never substitutes entities (`XML_PARSE_NOENT` is not set). libxml2 caps nesting at 256 levels, so the
/// recursive walks over a tree are bounded.
final class XMLTree {
    let document: xmlDocPtr

    private init(document: xmlDocPtr) { self.document = document }

    deinit { xmlFreeDoc(document) }

    /// libxml2 must be initialised once before threads use it.
    static let initialised: Bool = {
        xmlInitParser()
        return true
    }()

    /// Parses an XML part.
    /// - Throws: ``SluiceError/Code/malformed`` with libxml2's message and line when the XML is not
    ///   well-formed.
    static func xml(_ bytes: [UInt8], name: String) throws -> XMLTree {
        _ = initialised
        sluice_xml_silence_errors()
        let options = Int32(
            XML_PARSE_NONET.rawValue | XML_PARSE_NOERROR.rawValue | XML_PARSE_NOWARNING.rawValue
                | XML_PARSE_COMPACT.rawValue | XML_PARSE_NOCDATA.rawValue
        )
        xmlResetLastError()
        let parsed = bytes.withUnsafeBufferPointer { buffer in
            buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: buffer.count) {
                xmlReadMemory($0, Int32(buffer.count), name, nil, options)
            }
        }
        guard let parsed else { throw SluiceError(.malformed, "\(name) is not well-formed XML: \(lastError())") }
        return XMLTree(document: parsed)
    }

    /// Parses HTML in recover mode (as browsers do, broken markup still gives a tree).
    /// - Parameter encoding: The character set to decode with, as libxml2 (iconv) names it.
    static func html(_ bytes: [UInt8], encoding: String) throws -> XMLTree {
        _ = initialised
        sluice_xml_silence_errors()
        // XML_PARSE_HUGE lifts the tree builder's depth limit (256): without it the parser stops at the
        // 257th nested element and the rest of the document is silently lost. The HTML parser and the
        // walker (``HTMLWalker``) do not recurse per level, so depth costs memory (bounded by the file size),
        // not stack.
        let options = Int32(
            HTML_PARSE_NONET.rawValue | HTML_PARSE_RECOVER.rawValue | HTML_PARSE_NOERROR.rawValue
                | HTML_PARSE_NOWARNING.rawValue | HTML_PARSE_COMPACT.rawValue | HTML_PARSE_NOIMPLIED.rawValue
                | XML_PARSE_HUGE.rawValue
        )
        xmlResetLastError()
        let parsed = bytes.withUnsafeBufferPointer { buffer in
            buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: buffer.count) {
                htmlReadMemory($0, Int32(buffer.count), "document.html", encoding, options)
            }
        }
        guard let parsed else { throw SluiceError(.malformed, "HTML could not be parsed: \(lastError())") }
        let tree = XMLTree(document: parsed)
        // A parser that halted (recover mode keeps what came before) dropped the rest: say so rather than
        // index part of the document.
        if let error = xmlGetLastError(), error.pointee.level == XML_ERR_FATAL, let message = error.pointee.message,
            String(cString: message).contains("Excessive depth")
        {
            throw SluiceError(.tooDeep, "HTML nested too deeply for the parser: \(lastError())")
        }
        return tree
    }

    /// The root element.
    var root: xmlNodePtr? { xmlDocGetRootElement(document) }

    /// Whether the document carries a DTD (an internal subset, where entities would be declared).
    var hasDTD: Bool { document.pointee.intSubset != nil }

    static func lastError() -> String {
        guard let error = xmlGetLastError(), let message = error.pointee.message else { return "unknown error" }
        let text = String(cString: message).trimmingCharacters(in: .whitespacesAndNewlines)
        return error.pointee.line > 0 ? "line \(error.pointee.line): \(text)" : text
    }
}

/// Read access to libxml2 nodes.
extension UnsafeMutablePointer where Pointee == xmlNode {
    var isElement: Bool { pointee.type == XML_ELEMENT_NODE }
    var isText: Bool { pointee.type == XML_TEXT_NODE || pointee.type == XML_CDATA_SECTION_NODE }

    /// The local name (without a namespace prefix), lower-cased for HTML by the parser.
    var localName: String { pointee.name.map { String(cString: $0) } ?? "" }

    /// The element's children, in order.
    var children: XMLChildren { XMLChildren(first: pointee.children) }

    /// A text node's content.
    var content: String { pointee.content.map { String(cString: $0) } ?? "" }

    /// The first attribute with this local name, whatever its namespace.
    func attribute(_ name: String) -> String? {
        var attribute = pointee.properties
        while let current = attribute {
            if let attributeName = current.pointee.name, String(cString: attributeName) == name {
                guard let value = xmlNodeListGetString(pointee.doc, current.pointee.children, 1) else { return "" }
                defer { sluice_xml_free(value) }
                return String(cString: value)
            }
            attribute = current.pointee.next
        }
        return nil
    }

    /// The attribute with this local name in the namespace `namespace` (its URI, whatever its prefix):
    /// `r:id` and `id` are two attributes of one Office element.
    func attribute(_ name: String, namespace: String) -> String? {
        var attribute = pointee.properties
        while let current = attribute {
            if let attributeName = current.pointee.name, String(cString: attributeName) == name,
                let href = current.pointee.ns?.pointee.href, String(cString: href) == namespace
            {
                guard let value = xmlNodeListGetString(pointee.doc, current.pointee.children, 1) else { return "" }
                defer { sluice_xml_free(value) }
                return String(cString: value)
            }
            attribute = current.pointee.next
        }
        return nil
    }

    /// The first child element with this local name.
    func child(_ name: String) -> xmlNodePtr? { children.first { $0.isElement && $0.localName == name } }
}

/// The children of a libxml2 node, as a sequence.
struct XMLChildren: Sequence, IteratorProtocol {
    private var cursor: xmlNodePtr?

    init(first: xmlNodePtr?) { cursor = first }

    mutating func next() -> xmlNodePtr? {
        guard let current = cursor else { return nil }
        cursor = current.pointee.next
        return current
    }
}
