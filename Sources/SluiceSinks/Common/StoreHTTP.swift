import Foundation
import SluiceCore
import SluiceHTTP

/// JSON over HTTP for the HTTP stores (Chroma, Qdrant, Pinecone), on the shared ``HTTPClient``.
///
/// Every call is retried under ``RetryPolicy/store(maxRetries:maxRetryAfter:)`` on transient failures (timeouts,
/// network errors, 429 and 5xx; a `Retry-After` replaces the backoff, up to `maxRetryAfter`); other 4xx are errors at
/// once, with the server's message.
/// Header values (API keys) never appear in an error.
struct StoreHTTP: Sendable {
    let client: HTTPClient
    let baseURL: String
    let headers: [(String, String)]
    /// Retries after the first attempt (`sink.max_retries`).
    let maxRetries: Int
    let timeout: Duration
    /// `chroma`, `qdrant`, `pinecone`: names the store in messages.
    let label: String
    /// The longest `Retry-After` honoured (a longer or absurd one waits this long).
    let maxRetryAfter: Duration

    init(
        client: HTTPClient = .shared,
        baseURL: String,
        headers: [(String, String)],
        maxRetries: Int,
        timeout: Duration,
        label: String,
        maxRetryAfter: Duration = HTTPResponse.defaultRetryAfterCap
    ) {
        self.client = client
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.headers = headers
        self.maxRetries = maxRetries
        self.timeout = timeout
        self.label = label
        self.maxRetryAfter = maxRetryAfter
    }

    /// Sends a request (body: JSON bytes, or none) and returns the response when its status is 2xx or one
    /// of `accepting` (such as 404 when looking something up).
    @discardableResult
    func send(
        _ method: String,
        _ path: String,
        json body: [UInt8]? = nil,
        accepting: Set<Int> = []
    ) async throws -> HTTPResponse {
        try await send(method, path, body: body, contentType: "application/json", accepting: accepting)
    }

    /// Sends a request whose body has its own content type (a multipart upload), as ``send(_:_:json:accepting:)``.
    @discardableResult
    func send(
        _ method: String,
        _ path: String,
        body: [UInt8]?,
        contentType: String,
        accepting: Set<Int> = []
    ) async throws -> HTTPResponse {
        var requestHeaders = headers + [("Accept", "application/json")]
        if body != nil { requestHeaders.append(("Content-Type", contentType)) }
        let request = HTTPRequest(
            method: method,
            url: baseURL + path,
            headers: requestHeaders,
            body: body ?? [],
            timeout: timeout
        )
        let what = "\(label) \(method) \(path.split(separator: "?").first ?? "")"
        return try await withSinkRetries(
            policy: .store(maxRetries: maxRetries, maxRetryAfter: maxRetryAfter),
            what: what
        ) {
            let response: HTTPResponse
            do {
                response = try await client.send(request)
            } catch let error as SluiceError where error.isTransient {
                throw SluiceError(.sinkUnavailable, scrub("\(what): \(error.message)"), cause: error)
            }
            if response.isSuccess || accepting.contains(response.status) { return response }
            let message = scrub("\(what): HTTP \(response.status): \(Self.excerpt(response.bodyText))")
            if response.status == 429 || response.status >= 500 {
                let hint = ServerRetryHint(
                    wait: response.retryAfter(cap: maxRetryAfter),
                    rateLimited: response.status == 429
                )
                throw SluiceError(.sinkUnavailable, message, cause: hint)
            }
            if response.status == 401 || response.status == 403 {
                // Exit code 5 when it stops a run at start-up: fix the key, then run again.
                throw SluiceError(
                    .providerRefused,
                    "\(what): HTTP \(response.status): the server refused the credentials (check the API key variable)"
                )
            }
            throw SluiceError(.sinkFailed, message)
        }
    }

    /// Sends and decodes a JSON answer.
    func decode<T: Decodable>(
        _ type: T.Type,
        _ method: String,
        _ path: String,
        json body: [UInt8]? = nil
    ) async throws -> T {
        let response = try await send(method, path, json: body)
        do {
            return try JSONDecoder().decode(T.self, from: Data(response.body))
        } catch {
            throw SluiceError(
                .sinkFailed,
                scrub("\(label) \(method) \(path): unexpected answer: \(Self.excerpt(response.bodyText))"),
                cause: error
            )
        }
    }

    /// `message` without the credentials this store's headers carry, in any form a server may echo them
    /// (``EnvironmentSecret/redacting(_:in:)-swift.type.method``).
    func scrub(_ message: String) -> String {
        let secrets = headers.compactMap { name, value -> String? in
            guard Self.credentialHeaders.contains(name.lowercased()) else { return nil }
            return value.hasPrefix("Bearer ") ? String(value.dropFirst(7)) : value
        }
        return EnvironmentSecret.redacting(secrets, in: message)
    }

    /// The headers that carry a store's key (Qdrant, Pinecone, Chroma).
    static let credentialHeaders: Set<String> = ["api-key", "authorization", "x-chroma-token"]

    static func encode<T: Encodable>(_ value: T) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        return Array(try encoder.encode(value))
    }

    static func excerpt(_ text: String) -> String {
        let flat = text.replacingOccurrences(of: "\n", with: " ")
        return flat.count > 300 ? String(flat.prefix(300)) + "…" : flat
    }

    /// A path segment with everything but unreserved characters percent-encoded.
    static func segment(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~")))
            ?? text
    }
}
