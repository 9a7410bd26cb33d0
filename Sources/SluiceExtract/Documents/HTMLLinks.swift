internal import CLibXML2
import Foundation

/// The links of an HTML page, as a crawler reads them: parsed with libxml2's HTML parser (recover mode,
/// as the HTML extractor parses), never with patterns over the text.
///
/// - The links are the `href` of every `<a>` and `<area>`, in document order, as written (not resolved:
///   the caller resolves them against ``base`` or the page's URL).
/// - `rel="nofollow"` on a link leaves it out; `<meta name="robots" content="nofollow">` (or `none`)
///   leaves out every link of the page.
/// - `<base href>` (the first one) is reported as ``base``.
package struct HTMLLinks: Sendable, Hashable {
    /// The `href`s, in document order, without repeats.
    package var hrefs: [String] = []
    /// The page's `<base href>`, if it has one.
    package var base: String?

    package init(hrefs: [String] = [], base: String? = nil) {
        self.hrefs = hrefs
        self.base = base
    }

    /// Reads the links of `bytes` (the character set from a BOM, the transport's `declaredCharset` or a
    /// `<meta charset>`, else UTF-8 when the bytes are valid UTF-8, else windows-1252: ``HTMLSniffer``).
    /// - Throws: ``SluiceError/Code/malformed`` when libxml2 gives no tree at all.
    package init(html bytes: [UInt8], declaredCharset: String? = nil) throws {
        self.init()
        guard !bytes.isEmpty else { return }
        let tree = try XMLTree.html(bytes, encoding: HTMLSniffer.encoding(of: bytes, declared: declaredCharset))
        var found: [String] = []
        var seen: Set<String> = []
        var nofollowPage = false
        // Iterative walk (no recursion per level: a deeply nested page costs memory, not stack).
        var stack: [xmlNodePtr] = []
        var node = tree.document.pointee.children
        while let current = node ?? stack.popLast() {
            node = nil
            if current.isElement {
                switch current.localName {
                case "a", "area":
                    let rel = (current.attribute("rel") ?? "").lowercased().split(separator: " ")
                    if let href = current.attribute("href")?.trimmingCharacters(in: .whitespacesAndNewlines),
                        !href.isEmpty, !rel.contains("nofollow"), seen.insert(href).inserted
                    {
                        found.append(href)
                    }
                case "base":
                    if base == nil, let href = current.attribute("href"), !href.isEmpty {
                        base = href.trimmingCharacters(in: .whitespacesAndNewlines)
                    }
                case "meta":
                    if current.attribute("name")?.lowercased() == "robots" {
                        let content = (current.attribute("content") ?? "").lowercased()
                        let words = content.split { $0 == "," || $0 == " " }
                        if words.contains("nofollow") || words.contains("none") { nofollowPage = true }
                    }
                default: break
                }
            }
            if let next = current.pointee.next { stack.append(next) }
            if current.isElement, let child = current.pointee.children { node = child }
        }
        hrefs = nofollowPage ? [] : found
    }
}
