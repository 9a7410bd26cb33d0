import Foundation

/// Recognises HTML by its first bytes and finds its declared character set.
enum HTMLSniffer {
    /// Whether the bytes start like an HTML document: a doctype, `<html`, or (after comments and
    /// white space) a tag with `<head` or `<body` close by. With the extension as a hint, any text
    /// starting with `<` qualifies.
    static func looksLikeHTML(_ bytes: [UInt8], extensionHint: Bool) -> Bool {
        // Every case below starts with "<" after white space (bytes above 0x7F count as spaces): most texts
        // are told apart at their first visible byte, without lower-casing their first KiB.
        let firstVisible = bytes.prefix(1024).first { $0 < 0x80 && $0 != 0x20 && ($0 < 0x09 || $0 > 0x0D) }
        if let firstVisible, firstVisible != UInt8(ascii: "<") { return false }
        let head = lowercasedPrefix(bytes, 1024)
        guard let start = head.firstIndex(where: { !$0.isWhitespace }) else { return false }
        let text = head[start...]
        if text.hasPrefix("<!doctype html") || text.hasPrefix("<html") { return true }
        guard text.hasPrefix("<") else { return false }
        if extensionHint { return !bytes.prefix(8192).contains(0) }
        return text.contains("<html") || text.contains("<head") || text.contains("<body")
    }

    /// The character set to decode with, as libxml2 names it, in the HTML standard's order: a byte-order
    /// mark, then the transport's declaration (`declared`, an HTTP `Content-Type`'s charset), then a
    /// `<meta>` in the first 4 KiB, then UTF-8 when the bytes are valid UTF-8, else windows-1252. A label no
    /// character set answers to is passed over.
    static func encoding(of bytes: [UInt8], declared: String? = nil) -> String {
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { return "UTF-8" }
        if bytes.starts(with: [0xFF, 0xFE]) { return "UTF-16LE" }
        if bytes.starts(with: [0xFE, 0xFF]) { return "UTF-16BE" }
        if let declared, let name = Charset.named(declared) { return name }
        if let declared = declaredCharset(lowercasedPrefix(bytes, 4096)), let name = Charset.named(declared) {
            return name
        }
        return String(validating: bytes, as: UTF8.self) != nil ? "UTF-8" : "windows-1252"
    }

    /// The value of `charset=` inside a `<meta` tag, if any.
    static func declaredCharset(_ head: String) -> String? {
        var searchFrom = head.startIndex
        while let meta = head.range(of: "<meta", range: searchFrom..<head.endIndex) {
            let tagEnd = head[meta.upperBound...].firstIndex(of: ">") ?? head.endIndex
            let tag = head[meta.upperBound..<tagEnd]
            if let charset = tag.range(of: "charset") {
                var rest = tag[charset.upperBound...].drop { $0 == " " }
                if rest.first == "=" {
                    rest = rest.dropFirst().drop { $0 == " " || $0 == "\"" || $0 == "'" }
                    let name = rest.prefix {
                        $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == ":" || $0 == "."
                    }
                    if !name.isEmpty { return String(name) }
                }
            }
            searchFrom = tagEnd
        }
        return nil
    }

    /// The first `count` bytes as lower-cased text (bytes above 0x7F become spaces).
    private static func lowercasedPrefix(_ bytes: [UInt8], _ count: Int) -> String {
        String(decoding: bytes.prefix(count).map { $0 < 0x80 ? $0 : 0x20 }, as: UTF8.self).lowercased()
    }
}
