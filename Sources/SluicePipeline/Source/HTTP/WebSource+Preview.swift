import Foundation
import SluiceCore

extension WebSource {
    /// A dry run's conditional GET (``preview``): the outcome the run's request would have, with nothing
    /// written anywhere. A page without a record is new whatever its bytes: only the status is read. A page
    /// with one is read only when the answer has no validator (its bytes' hash is then its token), into
    /// memory. With `links` (a crawl), an HTML page is read into memory too, for its links.
    func previewFetch(
        _ entry: WebRunState.Entry,
        record: DocumentRecord?,
        headers: [(String, String)],
        links: Bool = false
    ) async -> (WebRunState.Outcome, CrawlRead?) {
        let answer: WebClient.Answer
        let known = record != nil
        do {
            answer = try await client.get(
                entry.url,
                headers: headers,
                maxBytes: maxBytes,
                body: links
                    ? .memoryWhen { headers in
                        WebContentType.isHTML(headers["content-type"])
                            || (known && headers["etag"] == nil && headers["last-modified"] == nil)
                    }
                    : known ? .unlessValidated : .none,
                writer: writer
            )
        } catch is WebClient.Disallowed {
            return (.disallowed, nil)
        } catch {
            return (Self.outcome(of: error, key: entry.key), nil)
        }
        let url = URL(string: entry.url) ?? location(of: entry.key)
        switch answer.status {
        case 304:
            return (Self.notModified(entry, url: url, record: record), nil)
        case 404, 410:
            return (.gone, nil)
        case 200..<300:
            var file = Self.listed(entry, url: url, answer: answer)
            if let token = file.changeToken {
                // A server that ignores the condition but sends the same validator sends the same bytes: the
                // record's size (the body was not read; Content-Length may count compressed bytes).
                if let record, record.changeToken == token { file.size = record.size }
            } else if record != nil {
                file.changeToken = "xxh3:\(ContentHash(of: answer.body))"
            }
            var read: CrawlRead?
            if links {
                let html = WebContentType.isHTML(answer.header("content-type"))
                read = CrawlRead(
                    token: file.changeToken,
                    html: html,
                    links: html
                        ? await self.links(in: answer.body, at: answer.url, contentType: answer.header("content-type"))
                        : []
                )
            }
            return (.previewed(file), read)
        default:
            return (
                .failed(
                    SourceProblem(key: entry.key, error: .unreadable, message: "\(answer.url): HTTP \(answer.status)")
                ), nil
            )
        }
    }
}
