import Foundation
import SluiceCore
import SluiceHTTP

/// How one provider's embedding API is spoken: the request for a batch and the vectors in the answer.
protocol EmbeddingDialect: Sendable {
    func request(for texts: [String], configuration: RemoteEmbedderConfiguration) throws -> HTTPRequest
    /// The vectors of a 2xx answer, in input order.
    func vectors(from response: HTTPResponse, count: Int) throws -> [[Float]]
    /// What a non-2xx answer means; the default follows OpenAI's conventions.
    func classify(_ response: HTTPResponse, batchSize: Int) -> ProviderAnswer
}

/// The meaning of a provider's answer, for the retry logic (of the embedders, and of `sluice ask`'s chat
/// client).
package enum ProviderAnswer: Equatable, Sendable {
    case success
    /// Too many inputs or tokens in one request: split the batch.
    case tooLarge(String)
    /// 429 rate limit (or a full queue): wait (`Retry-After`, capped), slow the whole budget down, retry.
    case rateLimited(String)
    /// The provider will not go on (quota, credentials): stop the run.
    case refused(String)
    /// 408, 409, 5xx: retry with backoff.
    case transient(String)
    /// A request the provider will never accept: fail the batch's documents.
    case invalid(String)
}

extension EmbeddingDialect {
    func classify(_ response: HTTPResponse, batchSize: Int) -> ProviderAnswer {
        ProviderAnswer(response, batchSize: batchSize)
    }
}

extension ProviderAnswer {
    /// What an answer means by OpenAI's conventions, for a request of `batchSize` inputs (a single input
    /// that is too large cannot be split: it is `invalid`).
    package init(_ response: HTTPResponse, batchSize: Int) {
        self = Self.classify(response, batchSize: batchSize)
    }

    private static func classify(_ response: HTTPResponse, batchSize: Int) -> ProviderAnswer {
        // A success's body is the vectors, read once by the dialect: parsing it here for an error message
        // that is never used doubled the decoding's CPU.
        if (200..<300).contains(response.status) { return .success }
        let message = providerMessage(response)
        switch response.status {
        case 401, 403:
            return .refused("HTTP \(response.status): \(message)")
        case 429:
            let code = providerErrorCode(response)
            if code == "insufficient_quota" || message.lowercased().contains("exceeded your current quota") {
                return .refused("HTTP 429 insufficient_quota: \(message)")
            }
            if isRequestTooLarge(message) {
                // OpenAI's "Request too large for <model> … on tokens per min (TPM): Limit L, Requested N.
                // The input or output tokens must be reduced …": more than the account may send in a
                // minute, so waiting never helps; a smaller request does.
                return batchSize > 1 ? .tooLarge("HTTP 429: \(message)") : .invalid("HTTP 429: \(message)")
            }
            return .rateLimited("HTTP 429: \(message)")
        case 413:
            return batchSize > 1 ? .tooLarge("HTTP 413: \(message)") : .invalid("HTTP 413: \(message)")
        case 400:
            let lower = message.lowercased()
            let sizeProblem = ["too long", "maximum", "max ", "too many", "context length", "batch size", "too large"]
                .contains { lower.contains($0) }
            if sizeProblem {
                return batchSize > 1 ? .tooLarge("HTTP 400: \(message)") : .invalid("HTTP 400: \(message)")
            }
            return .invalid("HTTP 400: \(message)")
        case 408, 409, 500..<600:
            return .transient("HTTP \(response.status): \(message)")
        default:
            return .invalid("HTTP \(response.status): \(message)")
        }
    }
}

/// Whether a 429's message says the request itself is over a per-minute limit (OpenAI's "Request too large
/// for … per min … must be reduced"), as opposed to the limit being used up for now.
func isRequestTooLarge(_ message: String) -> Bool {
    let lower = message.lowercased()
    return lower.contains("request too large") || lower.contains("must be reduced")
}

/// The limit and the request's size in OpenAI's "… (TPM): Limit L, Requested N." (tokens as the provider
/// counts them), when the message has both.
func requestSizeLimit(in message: String) -> (limit: Int, requested: Int)? {
    func number(after label: String) -> Int? {
        guard let range = message.range(of: label, options: .caseInsensitive) else { return nil }
        let digits = message[range.upperBound...].drop { $0 == " " }.prefix { $0.isNumber || $0 == "," }
        return Int(String(digits.filter(\.isNumber)))
    }
    guard let limit = number(after: "Limit "), let requested = number(after: "Requested "), limit > 0, requested > 0
    else { return nil }
    return (limit, requested)
}

/// The provider's error message from a JSON body (`error.message`, `error` as a string, `message`),
/// else the start of the body; at most 300 characters.
package func providerMessage(_ response: HTTPResponse) -> String {
    let json = try? JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]
    var text: String?
    if let error = json?["error"] as? [String: Any] {
        text = error["message"] as? String
    } else if let error = json?["error"] as? String {
        text = error
    } else if let message = json?["message"] as? String {
        text = message
    }
    let message = text ?? response.bodyText
    return String(message.prefix(300)).replacingOccurrences(of: "\n", with: " ")
}

/// `error.code` (or `error.type`) of an OpenAI-style error body.
func providerErrorCode(_ response: HTTPResponse) -> String? {
    guard let json = try? JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any],
        let error = json["error"] as? [String: Any]
    else { return nil }
    return (error["code"] as? String) ?? (error["type"] as? String)
}

/// Joins a base URL and a path with exactly one slash.
package func joinURL(_ base: String, _ path: String) -> String {
    var base = base
    while base.hasSuffix("/") { base.removeLast() }
    return base + (path.hasPrefix("/") ? path : "/" + path)
}
