import Foundation

/// A small reader for the XML documents the remote sources read (S3's listings, sitemaps): the text of
/// named elements, the five XML entities and numeric character references decoded, CDATA sections taken as
/// they are. Not a general XML parser: no attributes, no namespaces (a prefixed element is not found), no DTD.
enum XMLElements {
    /// The text of the first `<name>…</name>` in `xml`, entities decoded.
    static func element(_ name: String, in xml: Substring) -> String? {
        guard let open = xml.range(of: "<\(name)>"),
            let close = xml.range(of: "</\(name)>", range: open.upperBound..<xml.endIndex)
        else {
            if xml.contains("<\(name)/>") { return "" }
            return nil
        }
        return decodeText(xml[open.upperBound..<close.lowerBound])
    }

    /// An element's text: CDATA sections (`<![CDATA[…]]>`) as they are, the rest with entities decoded.
    static func decodeText(_ text: Substring) -> String {
        var out = ""
        var rest = text
        while let start = rest.range(of: "<![CDATA[") {
            out += decodeEntities(rest[..<start.lowerBound])
            guard let end = rest.range(of: "]]>", range: start.upperBound..<rest.endIndex) else {
                return out + decodeEntities(rest[start.lowerBound...])
            }
            out += rest[start.upperBound..<end.lowerBound]
            rest = rest[end.upperBound...]
        }
        return out + decodeEntities(rest)
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
    /// order, not decoded: blocks to read further with ``element(_:in:)``. Searched in the UTF-8 bytes, once
    /// through (Foundation's `range(of:)` on what is left made a 50,000-URL sitemap take minutes).
    static func blocks(_ name: String, in xml: Substring) -> [Substring] {
        let bytes = Array(xml.utf8)
        let open = Array("<\(name)".utf8)
        let close = Array("</\(name)>".utf8)
        var found: [Substring] = []
        var position = 0
        while let start = find(open, in: bytes, from: position) {
            let after = start + open.count
            guard after < bytes.count else { break }
            let next = bytes[after]
            // `<name>` or `<name attributes…>`, not `<nameOther>`.
            guard next == UInt8(ascii: ">") || next == 0x20 || next == 0x09 || next == 0x0A || next == 0x0D,
                let startEnd = bytes[after...].firstIndex(of: UInt8(ascii: ">"))
            else {
                position = after
                continue
            }
            let inner = startEnd + 1
            guard let end = find(close, in: bytes, from: inner) else { break }
            found.append(Substring(String(decoding: bytes[inner..<end], as: UTF8.self)))
            position = end + close.count
        }
        return found
    }

    /// Where `needle` first occurs in `bytes` at or after `start`.
    private static func find(_ needle: [UInt8], in bytes: [UInt8], from start: Int) -> Int? {
        guard let first = needle.first, needle.count <= bytes.count else { return nil }
        var index = start
        let last = bytes.count - needle.count
        while index <= last {
            guard let candidate = bytes[index...last].firstIndex(of: first) else { return nil }
            if bytes[candidate..<(candidate + needle.count)].elementsEqual(needle) { return candidate }
            index = candidate + 1
        }
        return nil
    }
}
