import Foundation
import SluiceCore
import SluiceHTTP

/// GET requests for the web source, through the one HTTP client (libcurl): redirects followed by hand
/// (at most `source.http.max_redirects`, each hop checked against robots.txt), one host asked at most once
/// per politeness delay (``HostPacer``), and the project's retries (``RetryPolicy``): a connection error, a
/// timeout, a 5xx or a 408 is transient, a 429 a rate limit whose `Retry-After` replaces the backoff.
struct WebClient: Sendable {
    /// What a GET came to (after its redirects): a 304, an error status, or a body (in memory, or the bytes
    /// written to a file).
    struct Answer: Sendable {
        var status: Int
        /// The URL that answered (the last redirect's target).
        var url: String
        /// Header fields, names lowercased.
        var headers: [String: String]
        var body: [UInt8] = []
        var written = 0

        func header(_ name: String) -> String? { headers[name.lowercased()] }
    }

    /// What becomes of a 2xx answer's body.
    enum Body: Sendable {
        /// Kept in ``Answer/body`` (a sitemap).
        case memory
        /// Written to the file at the path (created 0600): a page for the extract step.
        case file(String)
        /// Not read: the transfer is abandoned once the head arrived (a dry run's page whose record is
        /// unknown: the status is all it needs).
        case none
        /// Kept in memory only when the answer has neither `ETag` nor `Last-Modified`, since the bytes' hash
        /// is then the only change token (a dry run's page that has a record); else not read.
        case unlessValidated
        /// Kept in memory when the answer's header fields (names lowercased) say so (a crawled page read for
        /// its links when it is HTML); else not read.
        case memoryWhen(@Sendable ([String: String]) -> Bool)
    }

    /// A URL robots.txt does not let `user_agent` fetch.
    struct Disallowed: Error, Sendable {
        var url: String
    }

    /// The cause of the unavailability a request gives up with when its last attempt reached no server (a
    /// refused or reset connection, a name that does not resolve): the site is unreachable, not failing.
    struct Unreachable: Error, Sendable {}

    let settings: PipelineConfiguration.Source.HTTP
    let http: HTTPClient
    /// The one request loop (no gate): `source.http.max_retries`, the server's `Retry-After` up to two minutes.
    let call: RemoteCall<OpenGate, ContinuousClock>
    let pacer: HostPacer
    let robots = RobotsCache()
    let requests: WebRequestCounter

    init(settings: PipelineConfiguration.Source.HTTP, http: HTTPClient = .shared) {
        self.settings = settings
        self.http = http
        call = RemoteCall(policy: .source(maxRetries: settings.maxRetries))
        pacer = HostPacer(concurrency: settings.concurrency)
        requests = WebRequestCounter(workers: settings.concurrency)
    }

    /// GETs `url`, following redirects.
    /// - Parameters:
    ///   - headers: conditional headers (`If-None-Match`, `If-Modified-Since`).
    ///   - maxBytes: the largest body accepted (`too-large` past it, the transfer stopped there).
    ///   - body: what becomes of a 2xx body (``Body``); other answers' bodies are kept in ``Answer/body``.
    /// - Throws: ``Disallowed`` for a URL robots.txt disallows (a redirect's target included); an
    ///   unavailability after the retries are spent; ``SluiceError/Code/unreadable`` past the redirects
    ///   allowed; `too-large`; what writing the file throws.
    func get(
        _ url: String,
        headers: [(String, String)] = [],
        maxBytes: Int,
        body: Body = .memory,
        writer: BlockingExecutor
    ) async throws -> Answer {
        var current = url
        for _ in 0...settings.maxRedirects {
            guard let target = URL(string: current), let host = target.host else {
                throw SluiceError(.unreadable, "\(current) is not a URL Sluice can fetch")
            }
            let origin = Self.origin(of: target)
            var rules = RobotsRules.allowAll
            if settings.robotsTxt {
                rules = try await robotsRules(origin: origin, writer: writer)
                let pathAndQuery =
                    (target.path.isEmpty ? "/" : URLComponents(string: current)?.percentEncodedPath ?? "/")
                    + (target.query.map { "?" + $0 } ?? "")
                guard rules.allows(pathAndQuery) else {
                    requests.disallowed()
                    throw Disallowed(url: current)
                }
            }
            var request = HTTPRequest(url: current, headers: [("User-Agent", settings.userAgent)] + headers)
            request.timeout = .milliseconds(Int64(settings.timeoutSeconds * 1000))
            request.maxResponseBytes = maxBytes
            let delay = max(settings.delaySeconds, min(rules.crawlDelay ?? 0, 60))
            let answer = try await withRetries(what: "fetching \(current)") {
                try await pacer.wait(host: host, every: .milliseconds(Int64(delay * 1000)))
                requests.fetched()
                let started = ContinuousClock.now
                let response = try await http.stream(request)
                let status = response.status
                var answer = Answer(status: status, url: current, headers: response.headers)
                let validated = response.headers["etag"] != nil || response.headers["last-modified"] != nil
                var downloaded = 0  // the fetch row's bytes: documents downloaded, not sitemaps or links read
                switch body {
                case .file(let path) where (200..<300).contains(status):
                    answer.written = try await DownloadFile.write(response.body, to: path, writer: writer)
                    downloaded = answer.written
                case .none where (200..<300).contains(status),
                    .unlessValidated where (200..<300).contains(status) && validated,
                    .memoryWhen(_) where (200..<300).contains(status) && !body.wants(response.headers):
                    // Dropping the stream abandons the transfer: the body is never read.
                    answer.written = response.headers["content-length"].flatMap { Int($0) } ?? 0
                default:
                    answer.body = try await response.collect().body
                    answer.written = answer.body.count
                }
                requests.meter.answered(after: .now - started, bytes: downloaded)
                return answer
            }
            if [301, 302, 303, 307, 308].contains(answer.status), let location = answer.header("location"),
                let next = URL(string: location, relativeTo: target)?.absoluteURL.absoluteString
            {
                // A redirect to a URL with a user name or password is not followed: the credentials would be
                // sent (Basic authorization) and written into logs, reasons and the state.
                if let parts = URLComponents(string: next), parts.user != nil || parts.password != nil {
                    throw SluiceError(
                        .unreadable,
                        "\(current): redirected to a URL with a user name or password (\(WebSource.withoutUserInfo(next))); not followed"
                    )
                }
                current = WebDocumentKey.requestURL(next)
                continue
            }
            if answer.status == 304 { requests.notModified() }
            return answer
        }
        throw SluiceError(
            .unreadable,
            "\(url): more than \(settings.maxRedirects) redirects (source.http.max_redirects)"
        )
    }

    /// `scheme://host[:port]`.
    static func origin(of url: URL) -> String {
        "\(url.scheme ?? "http")://\(url.host ?? "")" + (url.port.map { ":\($0)" } ?? "")
    }

    /// The robots.txt rules of `origin` for this user agent, fetched once a run: a 4xx (none) allows
    /// everything; one that cannot be fetched (a 5xx, no answer) throws, and the URL is not fetched.
    /// As RFC 9309 asks: up to five redirects are followed (more: none), and the first 500 KiB are read,
    /// the rest left (a larger file is not an error).
    func robotsRules(origin: String, writer: BlockingExecutor) async throws -> RobotsRules {
        try await robots.rules(for: origin) {
            let url = origin + "/robots.txt"
            guard URL(string: url)?.host != nil else { return .allowAll }
            var current = url
            for _ in 0...Self.robotsRedirects {
                guard let target = URL(string: current), let host = target.host else { return .allowAll }
                var request = HTTPRequest(url: current, headers: [("User-Agent", settings.userAgent)])
                request.timeout = .milliseconds(Int64(settings.timeoutSeconds * 1000))
                request.maxResponseBytes = Self.robotsTransferLimit
                let answer = try await withRetries(what: "fetching \(current)") {
                    try await pacer.wait(host: host, every: .milliseconds(Int64(settings.delaySeconds * 1000)))
                    requests.fetchedRobots()
                    let started = ContinuousClock.now
                    let response = try await http.stream(request)
                    var body: [UInt8] = []
                    if (200..<300).contains(response.status) {
                        for try await piece in response.body {
                            body += piece.prefix(Self.robotsReadBytes - body.count)
                            if body.count >= Self.robotsReadBytes { break }  // the rest is abandoned
                        }
                    }
                    requests.meter.answered(after: .now - started)
                    return Answer(status: response.status, url: current, headers: response.headers, body: body)
                }
                switch answer.status {
                case 200..<300:
                    return RobotsRules(
                        text: String(decoding: answer.body, as: UTF8.self),
                        userAgent: settings.userAgent
                    )
                case 301, 302, 303, 307, 308:
                    guard let location = answer.header("location"),
                        let next = URL(string: location, relativeTo: target)?.absoluteURL.absoluteString,
                        next.hasPrefix("http://") || next.hasPrefix("https://"),
                        let parts = URLComponents(string: next), parts.user == nil, parts.password == nil
                    else { return .allowAll }
                    current = next
                case 300..<500: return .allowAll  // none (RFC 9309: unavailable, 4xx)
                default: throw SluiceError(.dependencyUnavailable, "\(current): HTTP \(answer.status)")
                }
            }
            return .allowAll  // more than five redirects: unavailable (RFC 9309 §2.3.1.2)
        }
    }

    /// Redirects followed for a robots.txt (RFC 9309 §2.3.1.2: at least five).
    static let robotsRedirects = 5
    /// The part of a robots.txt read (RFC 9309 §2.5: at least 500 KiB).
    static let robotsReadBytes = 500 * 1024
    /// Where a robots.txt's transfer is stopped if it is not left first (the read stops at 500 KiB).
    static let robotsTransferLimit = 8 << 20

    /// Runs `body` until it gives an answer that is not retryable, through the one request loop
    /// (``RemoteCall``, no gate): the retries spent are an unavailability, caused by ``Unreachable`` when the
    /// last attempt reached no server.
    private func withRetries(what: String, _ body: () async throws -> Answer) async throws -> Answer {
        try await call.run(
            what: what,
            onRetry: { requests.retried() },
            gaveUp: {
                SluiceError(.dependencyUnavailable, "http: \($0)", cause: $0.unreachable ? Unreachable() : nil)
            },
            attempt: {
                let answer = try await body()
                requests.answered()
                if answer.status == 429 {
                    return .retry(.rateLimited, reason: "\(what): HTTP 429", headers: answer.headers)
                }
                if answer.status >= 500 || answer.status == 408 {
                    return .retry(.transient, reason: "\(what): HTTP \(answer.status)", headers: answer.headers)
                }
                return .finished(answer)
            }
        )
    }
}

extension WebClient.Body {
    /// Whether a `.memoryWhen` body wants the answer with these header fields.
    func wants(_ headers: [String: String]) -> Bool {
        if case .memoryWhen(let wanted) = self { return wanted(headers) }
        return true
    }
}
