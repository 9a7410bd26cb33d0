import Foundation
import SluiceCore
import SluiceHTTP
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// `source.kind: http`: web pages and files named by URL (`source.http.urls`) or by sitemaps
/// (`source.http.sitemaps`, sitemap indexes followed).
///
/// - Keys: from the URL alone (``WebDocumentKey``); include/exclude and `--shard` apply to them.
/// - Change detection needs a request: the listing asks each URL with a conditional GET, from the
///   validators the checkpoint's record keeps as its change token (`etag:…` → `If-None-Match`,
///   `last-modified:…` → `If-Modified-Since`). A 304 is listed with the record's size and token, so the
///   scan skips it as unchanged: nothing downloaded. A 200 is downloaded into the state's `fetch/` while
///   listed and handed to the extract step; a page without validators is compared by a hash of its bytes
///   (`xxh3:…`), so it is downloaded each run but extracted only when it changed.
/// - robots.txt: a URL it disallows is not fetched and not listed (as if excluded: `--prune` deletes what
///   was indexed of it), and the run says which (``skipped``).
/// - Gone: a 404 or 410 is not listed, so `--prune` deletes it; a 5xx, a timeout or a robots.txt that cannot
///   be read fails the document (its indexed version kept, retried next run) and keeps it listed; a sitemap
///   that cannot be fetched or read fails the whole listing (nothing pruned).
/// - Unreachable: when no request of the source gets an answer and the URLs asked all fail to connect
///   (refused, reset, DNS), the source is unreachable: the walk throws an unavailability (exit 6) before
///   any document fails, and nothing is pruned. A URL that cannot connect while others answer fails only
///   its document.
/// - A run lists once: prune's complete listing and the scan share the requests (``WebRunState``).
/// - A dry run (``preview``) makes the same conditional requests but writes nothing: a 2xx body is read
///   only when its bytes are the change token (no `ETag`, no `Last-Modified`, a page with a record), and
///   then into memory; nothing goes to `fetch/` (nor is the state folder made).
struct WebSource: DocumentSource {
    let settings: PipelineConfiguration.Source.HTTP
    let client: WebClient
    let include: [GlobPattern]
    let exclude: [GlobPattern]
    let shard: Shard
    let leftOut = LeftOutFiles()
    let fetchDirectory: URL
    /// `extract.max_file_mb` in bytes: a download stops there.
    let maxBytes: Int
    let writer: BlockingExecutor
    let run = WebRunState()
    /// A dry run's source: it tells what changed and keeps no download (``DocumentSource/materialize(_:maxBytes:)``
    /// is then never called).
    let preview: Bool

    /// Sitemaps are small documents: 50 MB, the protocol's limit, at most.
    static let maxSitemapBytes = 50 * 1_048_576
    /// Sitemaps read at most (an index naming indexes is followed to this many).
    static let maxSitemaps = 1_000

    init(
        configuration: PipelineConfiguration.Source,
        shard: Shard,
        fetchDirectory: URL,
        maxBytes: Int,
        preview: Bool = false,
        http: HTTPClient = .shared
    ) {
        self.preview = preview
        settings = configuration.http
        client = WebClient(settings: configuration.http, http: http)
        include = configuration.include.map(GlobPattern.init)
        exclude = configuration.exclude.map(GlobPattern.init)
        self.shard = shard
        self.fetchDirectory = fetchDirectory
        self.maxBytes = maxBytes
        writer = BlockingExecutor(label: "sl-fetch", threads: 1)
    }

    var name: String {
        let first = (settings.urls + settings.sitemaps + settings.startURLs).first ?? "http"
        let count = settings.urls.count + settings.sitemaps.count + settings.startURLs.count
        return count == 1 ? first : "\(first) and \(count - 1) more"
    }
    var readsLocally: Bool { false }
    var requestSummary: String? { client.requests.summary }
    var fetchMeter: StageMeter? { client.requests.meter }

    /// The URLs robots.txt disallowed, for the run's notice.
    var skipped: String? {
        var notes: [String] = []
        let keys = run.disallowedKeys
        if !keys.isEmpty {
            let examples = keys.prefix(3).joined(separator: ", ")
            notes.append(
                "\(keys.count) URL\(keys.count == 1 ? " is" : "s are") disallowed by robots.txt for user agent \(settings.userAgent) and not fetched (\(examples)\(keys.count > 3 ? ", …" : ""))"
            )
        }
        let left = run.crawlLeft
        if left > 0 {
            notes.append(
                "the crawl stopped at source.http.max_pages (\(settings.maxPages) pages): \(left) page\(left == 1 ? "" : "s") it found \(left == 1 ? "was" : "were") not asked this run (and none is deleted for it)"
            )
        }
        let passed = run.passedOver
        if passed.count > 0 {
            let examples = passed.examples.map { "\($0.url): \($0.reason)" }.joined(separator: "; ")
            notes.append(
                "\(passed.count) sitemap URL\(passed.count == 1 ? " was" : "s were") passed over (\(examples)\(passed.count > 3 ? "; …" : ""))"
            )
        }
        return notes.isEmpty ? nil : notes.joined(separator: "; ")
    }

    /// `url` with its user name and password left out, for a notice.
    static func withoutUserInfo(_ url: String) -> String {
        guard var parts = URLComponents(string: url) else { return "a URL with credentials" }
        parts.user = nil
        parts.password = nil
        return String((parts.string ?? "a URL with credentials").prefix(200))
    }

    func countingCopy() -> (any DocumentSource)? { nil }

    func location(of key: String) -> URL {
        run.url(of: key).flatMap(URL.init(string:)) ?? URL(string: "http://" + key)
            ?? URL(fileURLWithPath: "/").appendingPathComponent(key)
    }

    func prepare() throws {}

    func recall(_ records: @escaping @Sendable (String) -> DocumentRecord?) { run.recall(records) }

    func removeLeftovers() { try? FileManager.default.removeItem(at: fetchDirectory) }

    func selects(_ key: String) -> Bool {
        include.contains { $0.matches(key) } && !exclude.contains { $0.matches(key) } && shard.owns(key)
    }

    /// The URLs to read, keyed, in the order given (the list, then each sitemap's, then the crawl's pages),
    /// without repeats; read once a run. The crawl (``crawl(into:)``) asks its pages while it lists: their
    /// outcomes are known when the walk comes to them.
    /// - Throws: an unavailability when a sitemap cannot be fetched or read.
    func listing() async throws -> [WebRunState.Entry] {
        if let listed = run.listed { return listed }
        var entries = try await listedURLs()
        if crawling { await crawl(into: &entries) }
        run.list(entries)
        return entries
    }

    /// The URLs of the list and the sitemaps, keyed, in order, without repeats (no crawl).
    func listedURLs() async throws -> [WebRunState.Entry] {
        var entries: [WebRunState.Entry] = []
        var seen: Set<String> = []
        func add(_ url: String, in sitemap: String? = nil) {
            // A relative `<loc>` (the protocol wants absolute URLs; `/docs/a.html` is a common slip) is read
            // against its sitemap's URL, as a link is read against its page's.
            var url = url
            if let sitemap, WebDocumentKey.key(for: url) == nil, let base = URL(string: sitemap),
                let resolved = URL(string: url, relativeTo: base)?.absoluteString
            {
                url = resolved
            }
            // A sitemap's URL with a user name or password is not fetched: its credentials would be sent
            // and written into logs (the pipeline file refuses such URLs).
            if let parts = URLComponents(string: url), parts.user != nil || parts.password != nil {
                run.passOver(sitemapURL: WebSource.withoutUserInfo(url), reason: "it carries a user name or password")
                return
            }
            let request = WebDocumentKey.requestURL(url)
            guard let key = WebDocumentKey.key(for: request) else {
                if let sitemap {
                    run.passOver(
                        sitemapURL: String(request.prefix(200)),
                        reason: "it is not an http(s) URL (in \(sitemap))"
                    )
                }
                return
            }
            guard seen.insert(key).inserted else { return }
            entries.append(.init(key: key, url: request))
        }
        for url in settings.urls { add(url) }
        var queue = settings.sitemaps
        var visited: Set<String> = []
        while !queue.isEmpty, visited.count < Self.maxSitemaps {
            let url = queue.removeFirst()
            guard visited.insert(url).inserted else { continue }
            let sitemap: Sitemap
            do {
                let answer = try await client.get(url, maxBytes: Self.maxSitemapBytes, writer: writer)
                guard (200..<300).contains(answer.status) else {
                    throw SluiceError(.dependencyUnavailable, "HTTP \(answer.status)")
                }
                sitemap = try Sitemap(body: answer.body, maxBytes: Self.maxSitemapBytes)
            } catch let error as WebClient.Disallowed {
                throw SluiceError(.configuration, "the sitemap \(error.url) is disallowed by its robots.txt")
            } catch let error as SluiceError {
                throw SluiceError(
                    .dependencyUnavailable,
                    "the sitemap \(url) could not be read (\(error.message)): the listing is incomplete",
                    cause: error
                )
            }
            queue += sitemap.sitemaps
            for page in sitemap.pages { add(page, in: url) }
        }
        // Sitemaps left unread past the limit: the listing is incomplete (its pages would be pruned).
        if queue.contains(where: { !visited.contains($0) }) {
            throw SluiceError(
                .dependencyUnavailable,
                "the sitemaps name more than \(Self.maxSitemaps) sitemaps: the listing is incomplete"
            )
        }
        return entries
    }

    nonisolated(nonsending) func walk(_ body: (Result<SourceFile, SourceProblem>) async -> Bool) async throws {
        // Failures to connect are held while no server of the source has answered: when none ever does,
        // the source is unreachable — a dependency failure (exit 6, nothing pruned), as for an S3 endpoint
        // — not each of its documents failing. Once one answers, they are the failures of their documents.
        var held: [SourceProblem] = []
        let entries = try await listing()
        // Asked a window at a time, `concurrency` requests in flight across hosts (``HostSchedule``): the
        // downloads waiting in `fetch/` for the extract step stay a window's worth.
        let window = max(16, settings.concurrency * 8)
        var prefetched = 0
        for (index, entry) in entries.enumerated() {
            if index == prefetched {
                prefetched = min(entries.count, index + window)
                let wanted = entries[index..<prefetched].filter { selects($0.key) && run.outcome(of: $0.key) == nil }
                let outcomes = await client.forEachConcurrently(
                    wanted,
                    host: { URL(string: $0.url)?.host ?? "" },
                    cancelled: {
                        WebRunState.Outcome.failed(SourceProblem(key: $0.key, error: .io, message: "cancelled"))
                    },
                    fetch: { entry in await fetch(entry).0 }
                )
                for (entry, outcome) in zip(wanted, outcomes) { run.record(outcome, of: entry.key) }
            }
            guard selects(entry.key) else {
                if shard.owns(entry.key) { leftOut.file(entry.key) }
                continue
            }
            guard let outcome = run.outcome(of: entry.key) else { continue }
            if case .unreachable(let problem) = outcome, !client.requests.anyAnswered {
                held.append(problem)
                continue
            }
            if !held.isEmpty, client.requests.anyAnswered {
                for problem in held {
                    if await !body(.failure(problem)) { return }
                }
                held = []
            }
            switch outcome {
            case .gone, .disallowed: continue
            case .failed(let problem), .unreachable(let problem): if await !body(.failure(problem)) { return }
            case .unchanged(let file), .fetched(let file, _, _), .previewed(let file):
                if await !body(.success(file)) { return }
            }
        }
        guard !held.isEmpty else { return }
        guard !client.requests.anyAnswered else {
            for problem in held {
                if await !body(.failure(problem)) { return }
            }
            return
        }
        throw SluiceError(
            .dependencyUnavailable,
            "\(name) cannot be reached: none of its \(held.count) URL\(held.count == 1 ? "" : "s") asked could connect (\(held[0].message)); no document is failed and nothing is pruned"
        )
    }

    /// The listing, then every selected URL asked (conditionally): what is gone (404, 410) is not held.
    ///
    /// With a crawl, a page not reached proves nothing (the crawl may have stopped at `max_pages`, a page
    /// linking to it may have failed, or links moved past `max_depth`): only what the run asked and found
    /// gone (404, 410) or disallowed by robots.txt, and what include/exclude leave out, is not held.
    func completeListing() async throws -> SourceListing {
        if crawling {
            try await walk { _ in true }
            let run = run
            let include = include
            let exclude = exclude
            return SourceListing { key in
                include.contains { $0.matches(key) } && !exclude.contains { $0.matches(key) }
                    && !run.isGoneOrDisallowed(key)
            }
        }
        var keys: Set<String> = []
        try await walk { entry in
            switch entry {
            case .success(let file): keys.insert(file.key)
            case .failure(let problem): keys.insert(problem.key)
            }
            return true
        }
        let listed = keys
        return SourceListing { listed.contains($0) }
    }

    /// One URL's conditional GET, as the listing's outcome for it; with `links`, what a crawl reads of a 2xx
    /// page too (its token, whether it is HTML, and then its links).
    func fetch(_ entry: WebRunState.Entry, links: Bool = false) async -> (WebRunState.Outcome, CrawlRead?) {
        let record = run.record(of: entry.key)
        var headers: [(String, String)] = []
        if let token = record?.changeToken {
            if token.hasPrefix("etag:") { headers.append(("If-None-Match", String(token.dropFirst(5)))) }
            if token.hasPrefix("last-modified:") { headers.append(("If-Modified-Since", String(token.dropFirst(14)))) }
        }
        if preview { return await previewFetch(entry, record: record, headers: headers, links: links) }
        let path: String
        do {
            path = try await DownloadFile.path(in: fetchDirectory, for: "download", writer: writer)
        } catch {
            let error = SluiceError.wrap(error, as: .io)
            return (.failed(SourceProblem(key: entry.key, error: error.code, message: error.message)), nil)
        }
        let answer: WebClient.Answer
        do {
            answer = try await client.get(
                entry.url,
                headers: headers,
                maxBytes: maxBytes,
                body: .file(path),
                writer: writer
            )
        } catch is WebClient.Disallowed {
            unlink(path)
            return (.disallowed, nil)
        } catch {
            unlink(path)
            return (Self.outcome(of: error, key: entry.key), nil)
        }
        let url = URL(string: entry.url) ?? location(of: entry.key)
        switch answer.status {
        case 304:
            unlink(path)
            return (Self.notModified(entry, url: url, record: record), nil)
        case 404, 410:
            unlink(path)
            return (.gone, nil)
        case 200..<300:
            var file = Self.listed(entry, url: url, answer: answer)
            let html = WebContentType.isHTML(answer.header("content-type"))
            var bytes: [UInt8]?
            if file.changeToken == nil || (links && html) {
                bytes = try? await writer.run {
                    try DocumentFile.open(path, identity: nil, followSymlink: false).readAll()
                }
            }
            if file.changeToken == nil { file.changeToken = bytes.map { "xxh3:\(ContentHash(of: $0))" } }
            var read: CrawlRead?
            if links {
                read = CrawlRead(
                    token: file.changeToken,
                    html: html,
                    links: html
                        ? await self.links(in: bytes ?? [], at: answer.url, contentType: answer.header("content-type"))
                        : []
                )
            }
            CrashPoint.reach("web.fetched")
            if let record, record.status == .indexed, record.pendingIDs.isEmpty, file.hasSameListing(as: record) {
                unlink(path)  // the same bytes (by their token): the scan skips it
                return (.unchanged(file), read)
            }
            // The extractors go by the name: the content type's extension.
            let named = fetchDirectory.appendingPathComponent(
                "\(UInt64.random(in: 0...UInt64.max))-"
                    + WebContentType.fileName(key: entry.key, contentType: answer.header("content-type"))
            ).path
            guard rename(path, named) == 0 else {
                unlink(path)
                return (
                    .failed(
                        SourceProblem(key: entry.key, error: .io, message: "cannot keep the download of \(entry.url)")
                    ), read
                )
            }
            return (.fetched(file, path: named, charset: WebContentType.charset(answer.header("content-type"))), read)
        default:
            unlink(path)
            return (
                .failed(
                    SourceProblem(key: entry.key, error: .unreadable, message: "\(answer.url): HTTP \(answer.status)")
                ), nil
            )
        }
    }

    /// The download the listing made, or (when the scan wants a URL the listing found unchanged: a failed
    /// document, a metadata change) an unconditional GET now.
    func materialize(_ file: SourceFile, maxBytes: Int) async throws -> MaterializedFile {
        if let (path, size, charset) = run.takeDownload(of: file.key) {
            var materialized = try DownloadFile.materialized(key: file.key, path: path, size: size)
            materialized.charset = charset
            return materialized
        }
        let url = run.url(of: file.key) ?? file.url.absoluteString
        let path = try await DownloadFile.path(in: fetchDirectory, for: "download", writer: writer)
        let answer: WebClient.Answer
        do {
            answer = try await client.get(url, maxBytes: maxBytes, body: .file(path), writer: writer)
        } catch let error as WebClient.Disallowed {
            unlink(path)
            throw SluiceError(.unreadable, "\(error.url) is disallowed by robots.txt; not fetched")
        } catch {
            unlink(path)
            throw error
        }
        guard (200..<300).contains(answer.status) else {
            unlink(path)
            throw SluiceError(.unreadable, "\(answer.url): HTTP \(answer.status)")
        }
        let named = fetchDirectory.appendingPathComponent(
            "\(UInt64.random(in: 0...UInt64.max))-"
                + WebContentType.fileName(key: file.key, contentType: answer.header("content-type"))
        ).path
        guard rename(path, named) == 0 else {
            unlink(path)
            throw SluiceError(.io, "cannot keep the download of \(url)")
        }
        var materialized = try DownloadFile.materialized(key: file.key, path: named, size: answer.written)
        materialized.charset = WebContentType.charset(answer.header("content-type"))
        return materialized
    }

    /// The listing's entry for a 304: the record's size and token (nil record: a 304 nobody asked for fails
    /// the document).
    static func notModified(_ entry: WebRunState.Entry, url: URL, record: DocumentRecord?) -> WebRunState.Outcome {
        guard let record else {
            return .failed(
                SourceProblem(
                    key: entry.key,
                    error: .unreadable,
                    message: "\(entry.url): HTTP 304 to an unconditional request"
                )
            )
        }
        var file = SourceFile(key: entry.key, url: url, size: record.size, mtimeNanoseconds: record.mtimeNanoseconds)
        file.changeToken = record.changeToken
        return .unchanged(file)
    }

    /// The listing's entry for a 2xx: its size as received, its `Last-Modified` as mtime, its validator as
    /// token (nil without one: the caller hashes the bytes).
    static func listed(_ entry: WebRunState.Entry, url: URL, answer: WebClient.Answer) -> SourceFile {
        var file = SourceFile(
            key: entry.key,
            url: url,
            size: answer.written,
            mtimeNanoseconds: answer.header("last-modified").flatMap(Self.nanoseconds(httpDate:)) ?? 0
        )
        file.changeToken = validator(of: answer)
        return file
    }

    /// The outcome of a request that threw (robots.txt aside): unreachable when no server answered its
    /// last attempt, else failed.
    static func outcome(of error: any Error, key: String) -> WebRunState.Outcome {
        let error = SluiceError.wrap(error, as: .unreadable)
        let problem = SourceProblem(key: key, error: error.code, message: error.message)
        return error.cause is WebClient.Unreachable ? .unreachable(problem) : .failed(problem)
    }

    /// The change token an answer's validators give: `etag:…`, else `last-modified:…`; nil without either
    /// (the bytes' hash is then the token).
    static func validator(of answer: WebClient.Answer) -> String? {
        if let etag = answer.header("etag"), !etag.isEmpty { return "etag:" + etag }
        if let modified = answer.header("last-modified"), !modified.isEmpty { return "last-modified:" + modified }
        return nil
    }

    /// An HTTP date (`Sun, 06 Nov 1994 08:49:37 GMT`) as nanoseconds since 1970.
    static func nanoseconds(httpDate text: String) -> Int64? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        return formatter.date(from: text).map { Int64($0.timeIntervalSince1970) * 1_000_000_000 }
    }
}

/// What a web source learnt in this run: the listing, each URL's outcome, downloads waiting for the
/// extract step, and the checkpoint's records (the validators); shared by prune's listing and the scan.
final class WebRunState: Sendable {
    struct Entry: Sendable, Hashable {
        var key: String
        var url: String
    }

    enum Outcome: Sendable {
        /// A 304 (or the same bytes): the record's size and token.
        case unchanged(SourceFile)
        /// Downloaded to `path`, for the extract step, with the `Content-Type`'s character set.
        case fetched(SourceFile, path: String, charset: String?)
        /// A dry run's 2xx: listed as it answered, nothing downloaded (``WebSource/preview``).
        case previewed(SourceFile)
        /// 404 or 410.
        case gone
        /// robots.txt disallows it: not fetched, not listed.
        case disallowed
        case failed(SourceProblem)
        /// No server answered its requests (refused, reset, DNS): failed, unless no URL of the source
        /// could connect (``WebSource/walk(_:)``).
        case unreachable(SourceProblem)
    }

    private struct State {
        var listed: [Entry]?
        var urls: [String: String] = [:]
        var outcomes: [String: Outcome] = [:]
        var records: (@Sendable (String) -> DocumentRecord?)?
        /// Pages the crawl did not ask because it reached `max_pages`.
        var crawlLeft = 0
        /// How many sitemap URLs were not listed, and the first three with why (for the run's notice).
        var passedOver = 0
        var passedOverExamples: [(url: String, reason: String)] = []
    }

    private let state = Mutex(State())

    var listed: [Entry]? { state.withLock { $0.listed } }

    func list(_ entries: [Entry]) {
        state.withLock {
            $0.listed = entries
            for entry in entries { $0.urls[entry.key] = entry.url }
        }
    }

    func url(of key: String) -> String? { state.withLock { $0.urls[key] } }

    /// Whether the crawl stopped at `max_pages` (pages it found were not asked).
    var crawlCut: Bool { state.withLock { $0.crawlLeft > 0 } }
    var crawlLeft: Int { state.withLock { $0.crawlLeft } }

    func cutCrawl(left: Int) { state.withLock { $0.crawlLeft += left } }

    /// How many sitemap URLs were not listed, and the first three met, with why.
    var passedOver: (count: Int, examples: [(url: String, reason: String)]) {
        state.withLock { ($0.passedOver, $0.passedOverExamples) }
    }

    func passOver(sitemapURL url: String, reason: String) {
        state.withLock {
            $0.passedOver += 1
            if $0.passedOverExamples.count < 3 { $0.passedOverExamples.append((url, reason)) }
        }
    }

    /// Whether the run asked `key` and it is gone (404, 410) or robots.txt disallows it.
    func isGoneOrDisallowed(_ key: String) -> Bool {
        state.withLock {
            switch $0.outcomes[key] {
            case .gone, .disallowed: return true
            default: return false
            }
        }
    }

    func recall(_ records: @escaping @Sendable (String) -> DocumentRecord?) { state.withLock { $0.records = records } }

    func record(of key: String) -> DocumentRecord? { state.withLock { $0.records }?(key) }

    func outcome(of key: String) -> Outcome? { state.withLock { $0.outcomes[key] } }

    /// The keys robots.txt disallowed, in listing order.
    var disallowedKeys: [String] {
        state.withLock { state in
            (state.listed ?? []).map(\.key).filter {
                if case .disallowed = state.outcomes[$0] { return true }
                return false
            }
        }
    }

    func record(_ outcome: Outcome, of key: String) { state.withLock { $0.outcomes[key] = outcome } }

    /// The download the listing made for `key`, handed over once.
    func takeDownload(of key: String) -> (path: String, size: Int, charset: String?)? {
        state.withLock {
            guard case .fetched(let file, let path, let charset) = $0.outcomes[key] else { return nil }
            $0.outcomes[key] = .unchanged(file)
            return (path, file.size, charset)
        }
    }
}
