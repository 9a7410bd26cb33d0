import Foundation

/// A small reader for the XML documents the remote sources read (S3's listings, sitemaps): the text of
/// named elements, the five XML entities and numeric character references decoded. Not a general XML
/// parser: no attributes, no namespaces (a prefixed element is not found), no CDATA, no DTD.
enum XMLElements {
    /// The text of the first `<name>…</name>` in `xml`, entities decoded.
    static func element(_ name: String, in xml: Substring) -> String? {
        guard let open = xml.range(of: "<\(name)>"),
            let close = xml.range(of: "</\(name)>", range: open.upperBound..<xml.endIndex)
        else {
            if xml.contains("<\(name)/>") { return "" }
            return nil
        }
        return decodeEntities(xml[open.upperBound..<close.lowerBound])
    }

    /// `&amp;`, `&lt;`, `&gt;`, `&quot;`, `&apos;`, `&#N;` and `&#xH;`.
    static func decodeEntities(_ text: Substring) -> String {
        guard text.contains("&") else { return String(text) }
        var out = ""
        var index = text.startIndex
        while index < text.endIndex {
            let character = text[index]
            guard character == "&", let semicolon = text[index...].firstIndex(of: ";") else {
                out.append(character)
                index = text.index(after: index)
                continue
            }
            let entity = text[text.index(after: index)..<semicolon]
            var decoded: String?
            switch entity {
            case "amp": decoded = "&"
            case "lt": decoded = "<"
            case "gt": decoded = ">"
            case "quot": decoded = "\""
            case "apos": decoded = "'"
            default:
                if entity.hasPrefix("#x") || entity.hasPrefix("#X") {
                    decoded = UInt32(entity.dropFirst(2), radix: 16).flatMap(Unicode.Scalar.init).map { String($0) }
                } else if entity.hasPrefix("#") {
                    decoded = UInt32(entity.dropFirst()).flatMap(Unicode.Scalar.init).map { String($0) }
                }
            }
            if let decoded {
                out += decoded
                index = text.index(after: semicolon)
            } else {
                out.append(character)
                index = text.index(after: index)
            }
        }
        return out
    }

    /// The inner text of every `<name>…</name>` block in `xml` (its start tag may carry attributes), in
    /// order, not decoded: blocks to read further with ``element(_:in:)``.
    static func blocks(_ name: String, in xml: Substring) -> [Substring] {
        var found: [Substring] = []
        var rest = xml
        while let open = rest.range(of: "<\(name)") {
            let after = rest[open.upperBound...]
            guard let next = after.first else { break }
            guard next == ">" || next.isWhitespace, let startEnd = after.firstIndex(of: ">") else {
                rest = after
                continue
            }
            let inner = rest.index(after: startEnd)
            guard let close = rest.range(of: "</\(name)>", range: inner..<rest.endIndex) else { break }
            found.append(rest[inner..<close.lowerBound])
            rest = rest[close.upperBound...]
        }
        return found
    }
}
