import Foundation

/// What a crawl learnt of each page it asked, kept in the state folder (`crawl-links.json`) for the next
/// run: the page's change token, whether it is HTML, and its links (normalised, every site). A page that
/// answers 304 to the next run's conditional request is unchanged, so its links are these: a no-op crawl
/// reads no page body. A page whose token is not the one asked with (or that is not here: a first run, a
/// lost file) is read again for its links.
///
/// Written whole (atomically) at the end of a crawl that was not a dry run, before any document of the run
/// is indexed: a record's token is never newer than the links kept for it (a run killed mid-crawl keeps
/// the file of the run before).
struct CrawlLinkCache: Sendable, Codable, Hashable {
    struct Page: Sendable, Codable, Hashable {
        /// The page's change token (`etag:…`, `last-modified:…`, `xxh3:…`); nil: none.
        var token: String?
        var html: Bool
        var links: [String]
    }

    /// By document key.
    var pages: [String: Page] = [:]

    static let fileName = "crawl-links.json"

    /// The file in `stateDirectory`; empty when there is none or it cannot be read (the links are then read
    /// from the pages again: a cost, never a wrong answer).
    static func load(stateDirectory: URL) -> CrawlLinkCache {
        guard let data = try? Data(contentsOf: stateDirectory.appendingPathComponent(fileName)),
            let cache = try? JSONDecoder().decode(CrawlLinkCache.self, from: data)
        else { return CrawlLinkCache() }
        return cache
    }

    /// Writes the file (0600, atomically).
    func save(stateDirectory: URL) throws {
        try FileManager.default.createDirectory(at: stateDirectory, withIntermediateDirectories: true)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let url = stateDirectory.appendingPathComponent(Self.fileName)
        try encoder.encode(self).write(to: url, options: .atomic)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: url.path)
    }

    /// The links kept for `key` when they belong to the version `token` names.
    func links(of key: String, token: String?) -> [String]? {
        guard let token, let page = pages[key], page.token == token else { return nil }
        return page.links
    }
}
