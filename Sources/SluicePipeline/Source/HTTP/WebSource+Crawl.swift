import Foundation
import SluiceCore
import SluiceExtract

/// What a crawl read of a page besides its outcome: its change token, whether it is HTML, and its links
/// (normalised; empty for a page that is not HTML).
struct CrawlRead: Sendable, Hashable {
    var token: String?
    var html: Bool
    var links: [String]
}

extension WebSource {
    /// The crawl's bounds and its state file's folder.
    var crawling: Bool { !settings.startURLs.isEmpty }
    var stateDirectory: URL { fetchDirectory.deletingLastPathComponent() }

    /// Whether `key` is a document of this pipeline (include/exclude), whatever the shard.
    func selectsDocument(_ key: String) -> Bool {
        include.contains { $0.matches(key) } && !exclude.contains { $0.matches(key) }
    }

    /// A same-site crawl from `source.http.start_urls`, breadth first, depth by depth: each level's pages
    /// are asked at once (``WebClient/forEachConcurrently(_:host:cancelled:fetch:)``), then the links of its
    /// HTML pages, in page order then link order, make the next level. Appends the pages asked to `entries`
    /// (a key already there is not asked twice) and records their outcomes, as the walk would.
    ///
    /// - Same site: a link is followed when its scheme, host and port are a start URL's.
    /// - Bounds: `max_depth` links from a start URL; `max_pages` pages asked in all (the crawl stops there;
    ///   ``WebRunState/crawlCut``).
    /// - include/exclude: a page they leave out is neither asked nor passed through. robots.txt: a page it
    ///   disallows is not asked (its links are not known).
    /// - Shards: every shard walks the whole link graph, so that each finds the same pages; a page of
    ///   another shard is asked for its links only (``linksOnly(_:cache:)``), never downloaded to `fetch/`.
    func crawl(into entries: inout [WebRunState.Entry]) async {
        let cache = CrawlLinkCache.load(stateDirectory: stateDirectory)
        var learnt = cache
        var listed = Set(entries.map(\.key))
        var seen: Set<String> = []
        var sites: Set<String> = []
        var level: [WebRunState.Entry] = []
        for start in settings.startURLs {
            guard let url = CrawlLink.normalised(start, against: nil), let site = CrawlLink.site(of: url),
                let key = WebDocumentKey.key(for: url)
            else { continue }
            sites.insert(site)
            if seen.insert(key).inserted, selectsDocument(key) { level.append(.init(key: key, url: url)) }
        }
        var asked = 0
        var depth = 0
        while !level.isEmpty {
            let room = settings.maxPages - asked
            if level.count > room {
                run.cutCrawl(left: level.count - room)
                level = Array(level.prefix(room))
            }
            asked += level.count
            let wantLinks = depth < settings.maxDepth
            let pages = await client.forEachConcurrently(
                level,
                host: { URL(string: $0.url)?.host ?? "" },
                cancelled: { _ in (WebRunState.Outcome?.none, CrawlRead?.none) },
                fetch: { entry in await crawlFetch(entry, links: wantLinks, cache: cache) }
            )
            var next: [WebRunState.Entry] = []
            for (entry, (outcome, read)) in zip(level, pages) {
                if listed.insert(entry.key).inserted { entries.append(entry) }
                if let outcome { run.record(outcome, of: entry.key) }
                if case .gone = outcome { learnt.pages[entry.key] = nil }
                if let read { learnt.pages[entry.key] = .init(token: read.token, html: read.html, links: read.links) }
                guard wantLinks, let read else { continue }
                for link in read.links {
                    guard let site = CrawlLink.site(of: link), sites.contains(site),
                        let key = WebDocumentKey.key(for: link), seen.insert(key).inserted, selectsDocument(key)
                    else { continue }
                    next.append(.init(key: key, url: link))
                }
            }
            // The run is stopping (SIGTERM, bound for the scan's walk; a prune's listing goes to its end):
            // no deeper level is asked. The pages not reached are not listed, which deletes nothing: a crawl's
            // prune only removes what it asked and found gone.
            guard !run.crawlCut, wantLinks, ShutdownSignal.current?.isRequested != true else { break }
            level = next
            depth += 1
        }
        if !preview, learnt != cache {
            let learnt = learnt
            let stateDirectory = stateDirectory
            try? await writer.run { try learnt.save(stateDirectory: stateDirectory) }
        }
    }

    /// The start URLs as entries (normalised, without repeats), for `sluice check`.
    func startEntries() -> [WebRunState.Entry] {
        var seen: Set<String> = []
        return settings.startURLs.compactMap { start in
            guard let url = CrawlLink.normalised(start, against: nil), let key = WebDocumentKey.key(for: url),
                seen.insert(key).inserted
            else { return nil }
            return WebRunState.Entry(key: key, url: url)
        }
    }

    /// One page of the crawl: the run's conditional GET for a page of this shard (its outcome, and its
    /// links when `links`), or a GET for its links alone for another shard's page (no outcome).
    private func crawlFetch(
        _ entry: WebRunState.Entry,
        links: Bool,
        cache: CrawlLinkCache
    ) async -> (WebRunState.Outcome?, CrawlRead?) {
        guard shard.owns(entry.key) else { return (nil, links ? await linksOnly(entry, cache: cache) : nil) }
        let (outcome, read) = await fetch(entry, links: links)
        guard links, read == nil else { return (outcome, read) }
        // Unchanged (a 304): the links kept for the version the record names, else read again.
        guard case .unchanged(let file) = outcome else { return (outcome, nil) }
        if let kept = cache.links(of: entry.key, token: file.changeToken) {
            return (
                outcome, CrawlRead(token: file.changeToken, html: cache.pages[entry.key]?.html ?? true, links: kept)
            )
        }
        var fresh = await linksOnly(entry, cache: CrawlLinkCache())
        fresh?.token = file.changeToken
        return (outcome, fresh)
    }

    /// A page read for its links only (another shard's, or an unchanged page whose links are not kept): a
    /// GET, conditional on the token `cache` keeps for it, whose body is read only when it is HTML; a page
    /// `cache` knows is not HTML is not asked. Nil when it cannot be read (no links from it this run).
    func linksOnly(_ entry: WebRunState.Entry, cache: CrawlLinkCache) async -> CrawlRead? {
        let kept = cache.pages[entry.key]
        if let kept, !kept.html, kept.token != nil { return CrawlRead(token: kept.token, html: false, links: []) }
        var headers: [(String, String)] = []
        if let token = kept?.token {
            if token.hasPrefix("etag:") { headers.append(("If-None-Match", String(token.dropFirst(5)))) }
            if token.hasPrefix("last-modified:") { headers.append(("If-Modified-Since", String(token.dropFirst(14)))) }
        }
        guard
            let answer = try? await client.get(
                entry.url,
                headers: headers,
                maxBytes: maxBytes,
                body: .memoryWhen { WebContentType.isHTML($0["content-type"]) },
                writer: writer
            )
        else { return nil }
        switch answer.status {
        case 304: return kept.map { CrawlRead(token: $0.token, html: $0.html, links: $0.links) }
        case 200..<300:
            let html = WebContentType.isHTML(answer.header("content-type"))
            return CrawlRead(
                token: Self.validator(of: answer),
                html: html,
                links: html
                    ? await links(in: answer.body, at: answer.url, contentType: answer.header("content-type")) : []
            )
        default: return nil
        }
    }

    /// The links of an HTML page fetched from `url` (after its redirects), resolved against its `<base href>`
    /// or `url`, normalised (``CrawlLink``), every site; libxml2 parses on the source's blocking thread.
    func links(in bytes: [UInt8], at url: String, contentType: String?) async -> [String] {
        let charset = WebContentType.charset(contentType)
        guard let found = try? await writer.run({ try HTMLLinks(html: bytes, declaredCharset: charset) }) else {
            return []
        }
        let page = URL(string: url)
        let base = found.base.flatMap { URL(string: $0, relativeTo: page)?.absoluteURL } ?? page
        var seen: Set<String> = []
        return found.hrefs.compactMap { CrawlLink.normalised($0, against: base) }.filter { seen.insert($0).inserted }
    }
}
