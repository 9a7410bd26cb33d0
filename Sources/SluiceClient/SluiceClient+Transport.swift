import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension SluiceClient {
    func request(_ method: String, _ path: String, query: [URLQueryItem] = [], body: Data? = nil) -> URLRequest {
        var url = baseURL
        if var components = URLComponents(url: baseURL, resolvingAgainstBaseURL: false) {
            let base = components.percentEncodedPath
            components.percentEncodedPath = (base.hasSuffix("/") ? String(base.dropLast()) : base) + "/" + path
            if !query.isEmpty { components.queryItems = query }
            url = components.url ?? baseURL
        }
        var request = URLRequest(url: url)
        request.httpMethod = method
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        if let body {
            request.httpBody = body
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        return request
    }

    func send<Response: Decodable>(
        _ method: String,
        _ path: String,
        query: [URLQueryItem] = []
    ) async throws -> Response {
        let (data, _) = try await exchange(request(method, path, query: query), accepting: [200, 202])
        return try decode(Response.self, data)
    }

    func send<Body: Encodable, Response: Decodable>(
        _ method: String,
        _ path: String,
        body: Body
    ) async throws
        -> Response
    {
        let encoded: Data
        do {
            encoded = try JSONEncoder().encode(body)
        } catch {
            throw SluiceClientError(code: "encoding", message: "cannot encode the request: \(error)")
        }
        let (data, _) = try await exchange(request(method, path, body: encoded), accepting: [200, 202])
        return try decode(Response.self, data)
    }

    /// One request and its answer; a status outside `accepting` throws the server's error.
    func exchange(_ request: URLRequest, accepting: Set<Int>) async throws -> (Data, HTTPURLResponse) {
        let (data, response): (Data, URLResponse?) = try await withCheckedThrowingContinuation { continuation in
            session.dataTask(with: request) { data, response, error in
                if let error {
                    continuation.resume(
                        throwing: SluiceClientError(code: "transport", message: error.localizedDescription)
                    )
                } else {
                    continuation.resume(returning: (data ?? Data(), response))
                }
            }
            .resume()
        }
        guard let http = response as? HTTPURLResponse else {
            throw SluiceClientError(code: "transport", message: "not an HTTP response")
        }
        guard accepting.contains(http.statusCode) else { throw SluiceClientError(http, body: data) }
        return (data, http)
    }

    func decode<T: Decodable>(_ type: T.Type, _ data: Data) throws -> T {
        do {
            return try JSONDecoder().decode(type, from: data)
        } catch {
            throw SluiceClientError(code: "decoding", message: "an answer the client does not understand: \(error)")
        }
    }
}
