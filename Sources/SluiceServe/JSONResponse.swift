import Foundation
import Hummingbird

/// JSON in and out of handlers: snake_case keys are the types' own (their `CodingKeys`).
enum JSONResponse {
    static func make(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data = try encoder.encode(value)
        return Response(
            status: status,
            headers: [.contentType: "application/json"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: data))
        )
    }

    /// A `JSONSerialization` object (keys sorted), for bodies the library builds as objects.
    static func make(object: [String: Any], status: HTTPResponse.Status = .ok) throws -> Response {
        let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        return Response(
            status: status,
            headers: [.contentType: "application/json"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: data))
        )
    }

    static func error(_ error: APIError) -> Response {
        (try? make(error.body, status: error.status))
            ?? Response(status: .internalServerError, headers: [.contentType: "application/json"])
    }

    /// The request's body as a JSON object, at most `limit` bytes (413 above it, 400 when it is not an object).
    static func object(_ request: Request, limit: Int) async throws -> [String: Any] {
        let buffer = try await request.body.collect(upTo: limit)
        let data = Data(buffer.readableBytesView)
        guard !data.isEmpty else { throw APIError.badRequest("the request needs a JSON body") }
        let parsed: Any
        do {
            parsed = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
        } catch {
            throw APIError.badRequest("the body is not valid JSON")
        }
        guard let object = parsed as? [String: Any] else { throw APIError.badRequest("the body must be a JSON object") }
        return object
    }
}
