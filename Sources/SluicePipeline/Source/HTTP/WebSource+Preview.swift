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
            let error = SluiceError.wrap(error, as: .unreadable)
            let problem = SourceProblem(key: entry.key, error: error.code, message: error.message)
            return error.cause is WebClient.Unreachable ? .unreachable(problem) : .failed(problem)
        }
        let url = URL(string: entry.url) ?? location(of: entry.key)
        switch answer.status {
        case 304:
            return Self.notModified(entry, url: url, record: record)
        case 404, 410:
            return .gone
        case 200..<300:
            var file = SourceFile(
                key: entry.key,
                url: url,
                size: answer.written,
                mtimeNanoseconds: answer.header("last-modified").flatMap(Self.nanoseconds(httpDate:)) ?? 0
            )
            if let token = Self.validator(of: answer) {
                file.changeToken = token
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
