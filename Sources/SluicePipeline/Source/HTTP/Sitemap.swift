import Foundation
import SluiceCore
import SluiceExtract

/// A sitemap (sitemaps.org protocol): a `<urlset>` listing pages, or a `<sitemapindex>` listing further
/// sitemaps. Read for their `<loc>`s only (`lastmod`, `changefreq` and `priority` are hints the conditional
/// requests make unnecessary). A gzipped sitemap (`sitemap.xml.gz`, sent as the file's bytes) is inflated first.
struct Sitemap: Sendable, Hashable {
    /// The pages of a `<urlset>`, in order.
    var pages: [String] = []
    /// The sitemaps a `<sitemapindex>` names, in order.
    var sitemaps: [String] = []

    /// - Throws: ``SluiceError/Code/malformed`` for a document that is neither a `<urlset>` nor a
    ///   `<sitemapindex>`: a sitemap that cannot be read is a listing that failed, never an empty one.
    init(xml: [UInt8]) throws {
        let text = Substring(String(decoding: xml, as: UTF8.self))
        let locations = { (block: String) in
            XMLElements.blocks(block, in: text).compactMap {
                XMLElements.element("loc", in: $0)?.trimmingCharacters(in: .whitespacesAndNewlines)
            }.filter { !$0.isEmpty }
        }
        // A sitemap cut short (a connection closed mid-body without a length) must not read as a shorter
        // listing: its pages past the cut would be pruned. Its root element must close.
        if text.contains("<sitemapindex") {
            guard text.contains("</sitemapindex>") else {
                throw SluiceError(.malformed, "a sitemap index cut short (no </sitemapindex>)")
            }
            sitemaps = locations("sitemap")
        } else if text.contains("<urlset") {
            guard text.contains("</urlset>") else {
                throw SluiceError(.malformed, "a sitemap cut short (no </urlset>)")
            }
            pages = locations("url")
        } else {
            throw SluiceError(.malformed, "not a sitemap (neither <urlset> nor <sitemapindex>)")
        }
    }

    /// A sitemap as a server sends it: XML, or gzipped XML (told by its first bytes, not by its name or type).
    /// - Parameter maxBytes: the most XML bytes a gzipped sitemap may inflate to.
    /// - Throws: as ``init(xml:)``, and for gzip data that is damaged, cut short or inflates past `maxBytes`.
    init(body: [UInt8], maxBytes: Int) throws {
        guard GzipMembers.isGzip(body) else {
            try self.init(xml: body)
            return
        }
        let xml: [UInt8]
        do {
            xml = try GzipMembers.inflate(body, maxBytes: maxBytes)
        } catch let error as SluiceError {
            throw SluiceError(error.code, "a gzipped sitemap that cannot be read: \(error.message)", cause: error)
        }
        try self.init(xml: xml)
    }

    init(pages: [String] = [], sitemaps: [String] = []) {
        self.pages = pages
        self.sitemaps = sitemaps
    }
}
