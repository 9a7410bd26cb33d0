import Foundation
import SluiceCore

extension WebSource {
    /// A dry run's conditional GET (``preview``): the outcome the run's request would have, with nothing
    /// written anywhere. A page without a record is new whatever its bytes: only the status is read. A page
    /// with one is read only when the answer has no validator (its bytes' hash is then its token), into
    /// memory.
    func previewFetch(
        _ entry: WebRunState.Entry,
        record: DocumentRecord?,
        headers: [(String, String)]
    ) async -> WebRunState.Outcome {
        let answer: WebClient.Answer
        do {
            answer = try await client.get(
                entry.url,
                headers: headers,
                maxBytes: maxBytes,
                body: record == nil ? .none : .unlessValidated,
                writer: writer
            )
        } catch is WebClient.Disallowed {
            return .disallowed
        } catch {
            return Self.outcome(of: error, key: entry.key)
        }
        let url = URL(string: entry.url) ?? location(of: entry.key)
        switch answer.status {
        case 304:
            return Self.notModified(entry, url: url, record: record)
        case 404, 410:
            return .gone
        case 200..<300:
            var file = Self.listed(entry, url: url, answer: answer)
            if let token = file.changeToken {
                // A server that ignores the condition but sends the same validator sends the same bytes: the
                // record's size (the body was not read; Content-Length may count compressed bytes).
                if let record, record.changeToken == token { file.size = record.size }
            } else if record != nil {
                file.changeToken = "xxh3:\(ContentHash(of: answer.body))"
            }
            return .previewed(file)
        default:
            return .failed(
                SourceProblem(key: entry.key, error: .unreadable, message: "\(answer.url): HTTP \(answer.status)")
            )
        }
    }
}
