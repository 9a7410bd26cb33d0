import Foundation
import SluiceCore

extension WebSource {
    /// Sites asked at most by `sluice check` (one request each).
    static let maxCheckedSites = 20

    /// `sluice check`'s line for a web source: the listing (the sitemaps fetched and read; a crawl's start
    /// URLs, the crawl itself not made: it is a run's worth of requests), how many URLs
    /// the include patterns match, and whether each site answers — one unconditional GET of the first
    /// selected URL of each site (scheme, host and port), whose body is not read (robots.txt is read first
    /// when honoured, as a run reads it). The fewest requests that answer the question: the sitemaps
    /// already showed their own site answers, but not that the pages' sites do.
    ///
    /// - A site that cannot be reached (refused, reset, DNS, a 5xx or a timeout after the retries): the
    ///   check is unavailable (exit 6).
    /// - A 401 or 403: refused, a setting to fix (exit 1, as a refused key is for the other checks).
    /// - A URL gone (404, 410) or disallowed by robots.txt: the site answers; the line says so.
    func check(shard: Shard) async -> DependencyCheck {
        let entries: [WebRunState.Entry]
        do {
            entries = try await listedURLs() + startEntries()
        } catch let error as SluiceError {
            let unavailable = error.isUnavailability || error.code == .dependencyUnavailable
            return DependencyCheck(
                "source",
                unavailable ? .unavailable : .failed,
                "\(name): \(error.message)",
                fix: unavailable ? "check the sitemaps' URLs and the network, then run again" : "check source.http"
            )
        } catch {
            return DependencyCheck("source", .failed, "\(name): \(error)")
        }
        let selected = entries.filter { selects($0.key) }
        for entry in entries where !selects(entry.key) && shard.owns(entry.key) { leftOut.file(entry.key) }
        let shardText = shard == .whole ? "" : " of shard \(shard)"
        let hint = selected.isEmpty ? " (check source.http.urls, the sitemaps, source.include and source.exclude)" : ""
        let crawl =
            crawling
            ? "; a crawl from \(settings.startURLs.count) start URL\(settings.startURLs.count == 1 ? "" : "s") (the pages it finds are not asked by check)"
            : ""
        let counted =
            "\(name): \(selected.count) URLs match include/exclude\(shardText)\(hint) (\(entries.count) listed\(crawl))"

        var firstOfSite: [(origin: String, entry: WebRunState.Entry)] = []
        var sites: Set<String> = []
        for entry in selected {
            guard let url = URL(string: entry.url) else { continue }
            let origin = WebClient.origin(of: url)
            if sites.insert(origin).inserted { firstOfSite.append((origin, entry)) }
        }
        var answers: [String] = []
        for (origin, entry) in firstOfSite.prefix(Self.maxCheckedSites) {
            do {
                let answer = try await client.get(entry.url, maxBytes: maxBytes, body: .none, writer: writer)
                switch answer.status {
                case 401, 403:
                    return DependencyCheck(
                        "source",
                        .failed,
                        "\(counted); \(origin) refuses: HTTP \(answer.status) for \(entry.url)",
                        fix:
                            "check that the site lets user agent \(settings.userAgent) read these URLs (Sluice sends no credentials)"
                    )
                case 200..<400:
                    answers.append("\(origin) answers (HTTP \(answer.status))")
                case 404, 410:
                    answers.append("\(origin) answers, but \(entry.url) is gone (HTTP \(answer.status))")
                default:
                    answers.append("\(origin) answers HTTP \(answer.status) for \(entry.url)")
                }
            } catch let error as WebClient.Disallowed {
                answers.append("\(origin) answers; robots.txt disallows \(error.url)")
            } catch let error as SluiceError where error.isUnavailability || error.code == .dependencyUnavailable {
                return DependencyCheck(
                    "source",
                    .unavailable,
                    "\(counted); \(origin) cannot be reached: \(error.message)",
                    fix: "check the URLs and the network (or the site), then run again"
                )
            } catch {
                return DependencyCheck(
                    "source",
                    .failed,
                    "\(counted); \(origin): \(Pipeline.failureDescription(error))",
                    fix: "check source.http"
                )
            }
        }
        if firstOfSite.count > Self.maxCheckedSites {
            answers.append("\(firstOfSite.count - Self.maxCheckedSites) more sites not asked")
        }
        return DependencyCheck(
            "source",
            .ok,
            counted + (answers.isEmpty ? "" : "; " + answers.joined(separator: "; "))
                + (leftOut.summary.map { "; left out: \($0)" } ?? "")
        )
    }
}
