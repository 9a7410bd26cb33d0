import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A failed call: the server's structured error (`{"error": {"code", "message"}}`, with its HTTP status),
/// or the client's own (`transport`, `decoding`, `encoding`; status nil).
public struct SluiceClientError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The HTTP status, when the server answered.
    public var status: Int?
    /// The error's code: `usage`, `not-found`, `unauthorized`, `too-large`, `lock-held`, `timeout`, …
    public var code: String
    public var message: String
    /// For `lock-held` (409): the id of the run that holds the lock, where known.
    public var runID: String?
    /// For `rate-limited` (429): the seconds the server asks to wait (`Retry-After`), where it says.
    public var retryAfterSeconds: Int?

    public init(status: Int? = nil, code: String, message: String, runID: String? = nil) {
        self.status = status
        self.code = code
        self.message = message
        self.runID = runID
    }

    /// The error a non-success answer carries, with its `Retry-After` (a 429's).
    init(_ response: HTTPURLResponse, body: Data) {
        self.init(status: response.statusCode, body: body)
        retryAfterSeconds = response.value(forHTTPHeaderField: "Retry-After").flatMap { Int($0) }
    }

    /// The error a non-success answer carries.
    init(status: Int, body: Data) {
        struct Envelope: Decodable {
            struct Detail: Decodable {
                var code: String
                var message: String
                var runID: String?
                enum CodingKeys: String, CodingKey {
                    case code, message
                    case runID = "run_id"
                }
            }
            var error: Detail
        }
        if let envelope = try? JSONDecoder().decode(Envelope.self, from: body) {
            self.init(
                status: status,
                code: envelope.error.code,
                message: envelope.error.message,
                runID: envelope.error.runID
            )
        } else {
            self.init(
                status: status,
                code: "http-\(status)",
                message: String(decoding: body.prefix(200), as: UTF8.self)
            )
        }
    }

    public var description: String { "\(code): \(message)" + (status.map { " (HTTP \($0))" } ?? "") }
}
