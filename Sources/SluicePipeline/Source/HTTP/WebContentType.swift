import Foundation

/// What a `Content-Type` says a download is, as the file-name extension the extractors go by (a page at
/// `/docs/intro` served as `text/html` is read as HTML; a `.php` URL serving a PDF as a PDF). The
/// extractors sniff the bytes too: a type not listed here keeps the URL's own name.
enum WebContentType {
    static let extensions: [String: String] = [
        "text/html": "html", "application/xhtml+xml": "html", "text/plain": "txt", "text/markdown": "md",
        "text/x-markdown": "md", "text/csv": "csv", "text/tab-separated-values": "tsv",
        "application/json": "json", "application/x-ndjson": "ndjson", "application/pdf": "pdf",
        "application/rtf": "rtf", "text/rtf": "rtf", "application/epub+zip": "epub",
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx",
        "application/vnd.openxmlformats-officedocument.presentationml.presentation": "pptx",
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "xlsx",
        "application/vnd.oasis.opendocument.text": "odt",
        "application/vnd.oasis.opendocument.spreadsheet": "ods",
        "application/vnd.oasis.opendocument.presentation": "odp",
        "image/png": "png", "image/jpeg": "jpg", "image/tiff": "tiff", "image/gif": "gif", "image/webp": "webp",
        "image/bmp": "bmp",
    ]

    /// The extension for `contentType` (`text/html; charset=utf-8` is `html`); nil for a type not listed.
    static func fileExtension(_ contentType: String?) -> String? {
        guard let contentType else { return nil }
        let type = contentType.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        return type.flatMap { extensions[$0] }
    }

    /// The `charset` parameter of `contentType` (`text/html; charset="windows-1251"` is `windows-1251`),
    /// for the extractors (``ExtractionInput/declaredCharset``); nil when it names none.
    static func charset(_ contentType: String?) -> String? {
        guard let contentType else { return nil }
        for parameter in contentType.split(separator: ";").dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1)
            guard pair.count == 2, pair[0].trimmingCharacters(in: .whitespaces).lowercased() == "charset" else {
                continue
            }
            let value = pair[1].trimmingCharacters(in: .whitespaces).trimmingCharacters(in: ["\"", "'"])
            return value.isEmpty || value.utf8.count > 40 ? nil : value
        }
        return nil
    }

    /// Whether `contentType` is a page whose links a crawl reads (`text/html`, `application/xhtml+xml`).
    static func isHTML(_ contentType: String?) -> Bool { fileExtension(contentType) == "html" }

    /// The name a download of `key` is written under: its last path component (query left out), with the
    /// extension the content type says when it says one.
    static func fileName(key: String, contentType: String?) -> String {
        let path = key.split(separator: "?", maxSplits: 1).first.map(String.init) ?? key
        let last = path.split(separator: "/").last.map(String.init) ?? "page"
        guard let wanted = fileExtension(contentType) else { return last }
        let stem = last.split(separator: ".").count > 1 ? String(last[..<last.lastIndex(of: ".")!]) : last
        return (stem.isEmpty ? "page" : stem) + "." + wanted
    }
}
