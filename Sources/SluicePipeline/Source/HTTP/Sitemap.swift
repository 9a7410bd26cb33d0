import Foundation
import SluiceCore

/// A sitemap (sitemaps.org protocol): a `<urlset>` listing pages, or a `<sitemapindex>` listing further
/// sitemaps. Read for their `<loc>`s only (`lastmod`, `changefreq` and `priority` are hints the conditional
/// requests make unnecessary). A gzipped sitemap (`.xml.gz`) is not read.
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
        if text.contains("<sitemapindex") {
            sitemaps = locations("sitemap")
        } else if text.contains("<urlset") {
            pages = locations("url")
        } else {
            throw SluiceError(.malformed, "not a sitemap (neither <urlset> nor <sitemapindex>)")
        }
    }

    init(pages: [String] = [], sitemaps: [String] = []) {
        self.pages = pages
        self.sitemaps = sitemaps
    }
}
