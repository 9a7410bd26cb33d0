import Foundation
import Hummingbird
import NIOCore
import SluiceCore

/// An error as the API answers it: an HTTP status and `{"error": {"code": …, "message": …}}`, with the
/// codes of ``SluiceError/Code`` where one exists (docs/SERVE.md, "Errors"). Bad input is always a 4xx.
struct APIError: Error, Sendable {
    var status: HTTPResponse.Status
    var code: String
    var message: String
    /// Extra fields of the error object (the running run's id of a 409; nil: JSON null).
    var details: [String: String?] = [:]

    init(_ status: HTTPResponse.Status, _ code: String, _ message: String, details: [String: String?] = [:]) {
        self.status = status
        self.code = code
        self.message = message
        self.details = details
    }

    static func badRequest(_ message: String) -> APIError { APIError(.badRequest, "usage", message) }
    static func notFound(_ message: String) -> APIError { APIError(.notFound, "not-found", message) }

    /// The answer for any error a handler throws.
    init(_ error: any Error) {
        switch error {
        case let error as APIError:
            self = error
        case let error as SluiceError:
            self.init(sluice: error)
        case is NIOTooManyBytesError:  // a body over the limit (`request.body.collect(upTo:)`)
            self.init(.contentTooLarge, SluiceError.Code.tooLarge.rawValue, "the request body is over the limit")
        case let error as HTTPError:
            switch error.status {
            case .contentTooLarge:
                self.init(.contentTooLarge, SluiceError.Code.tooLarge.rawValue, "the request body is over the limit")
            case .notFound: self.init(.notFound, "not-found", "no such route")
            case .methodNotAllowed: self.init(.methodNotAllowed, "method-not-allowed", "method not allowed here")
            case let status where (400..<500).contains(status.code):
                self.init(status, "usage", error.body ?? status.reasonPhrase)
            default: self.init(.internalServerError, "internal", "an internal error (see the server's log)")
            }
        default:
            self.init(.internalServerError, "internal", "an internal error (see the server's log)")
        }
    }

    private init(sluice error: SluiceError) {
        let status: HTTPResponse.Status
        switch error.code {
        case .usage, .configuration: status = .badRequest
        case .lockHeld, .embedderMismatch: status = .conflict
        // The server cannot answer from a damaged state until it is restored or repaired (the message says how).
        case .stateCorrupt: status = .serviceUnavailable
        case _ where error.isUnavailability: status = .serviceUnavailable
        case .providerRefused: status = .serviceUnavailable
        default: status = .internalServerError
        }
        self.init(status, error.code.rawValue, error.message)
    }

    /// The JSON body. Every 409 has `run_id` (null when no run of this state is known to hold it, as with
    /// `embedder-mismatch`), so a client can always read it.
    var body: ErrorBody {
        var details = details
        if status == .conflict, !details.keys.contains("run_id") { details["run_id"] = .some(nil) }
        return ErrorBody(error: .init(code: code, message: message, details: details))
    }

    struct ErrorBody: Encodable {
        struct Detail: Encodable {
            var code: String
            var message: String
            var details: [String: String?]

            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: DynamicKey.self)
                try container.encode(code, forKey: DynamicKey("code"))
                try container.encode(message, forKey: DynamicKey("message"))
                for (key, value) in details { try container.encode(value, forKey: DynamicKey(key)) }
            }
        }
        var error: Detail
    }

    private struct DynamicKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(_ string: String) { stringValue = string }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}
