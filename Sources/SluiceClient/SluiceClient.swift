import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A client of `sluice serve` for apps (iOS, macOS, Linux): search, documents and runs over URLSession,
/// with the types of the API's OpenAPI document (docs/openapi.json) written by hand.
///
/// ```swift
/// let client = SluiceClient(baseURL: URL(string: "http://127.0.0.1:8080")!)
/// let answer = try await client.search(SearchRequest(query: "backup policy", k: 5))
/// ```
///
/// Every method throws ``SluiceClientError``: the server's structured error (`code`, `message`) when it
/// answered one, else a transport failure. Streaming endpoints (`ask` with server-sent events) return an
/// `AsyncThrowingStream` of ``ServerSentEvent``s parsed by ``ServerSentEventParser``.
public struct SluiceClient: Sendable {
    public var baseURL: URL
    /// The bearer token, when the server requires one (`serve.api_key_env`).
    public var token: String?
    public var session: URLSession

    public init(baseURL: URL, token: String? = nil, session: URLSession = .shared) {
        self.baseURL = baseURL
        self.token = token
        self.session = session
    }

    /// `GET /health`.
    public func health() async throws -> Health { try await send("GET", "health") }

    /// `GET /ready`: also when the server answers 503 (not ready), the report says which dependency is down.
    public func ready() async throws -> Readiness {
        let (data, _) = try await exchange(request("GET", "ready"), accepting: [200, 503])
        return try decode(Readiness.self, data)
    }

    /// `POST /v1/search`.
    public func search(_ search: SearchRequest) async throws -> SearchResponse {
        try await send("POST", "v1/search", body: search)
    }

    /// `GET /v1/documents`: one page; pass its `nextCursor` as `cursor` for the next.
    public func documents(status: String? = nil, cursor: String? = nil, limit: Int? = nil) async throws -> DocumentPage
    {
        let filter = status.map { [URLQueryItem(name: "status", value: $0)] } ?? []
        return try await send("GET", "v1/documents", query: filter + Self.page(cursor, limit))
    }

    /// `GET /v1/documents/{key}`: the key is percent-encoded into one path segment (slashes too). One page
    /// of the document's chunks, by ordinal: pass the answer's `nextCursor` as `chunkCursor` for the next
    /// (`truncated` says whether one follows); `chunkLimit` is 1 to 1,000 (100 when nil).
    public func document(
        key: String,
        chunkCursor: String? = nil,
        chunkLimit: Int? = nil
    ) async throws
        -> DocumentDetail
    {
        try await send("GET", "v1/documents/" + Self.segment(key), query: Self.page(chunkCursor, chunkLimit))
    }

    /// `GET /v1/export`: one page of the records the credential may read (with their vectors), `limit` 1 to
    /// 1,000 (100 when nil); pass the answer's `nextCursor` as `cursor` for the next. Needs the `export` scope.
    public func export(cursor: String? = nil, limit: Int? = nil) async throws -> ExportPage {
        try await send("GET", "v1/export", query: Self.page(cursor, limit))
    }

    /// `POST /v1/runs`: starts an incremental run; throws `lock-held` (409) while one is going.
    public func startRun() async throws -> Run { try await send("POST", "v1/runs", body: [String: String]()) }

    /// `GET /v1/runs/{id}`.
    public func run(id: String) async throws -> Run { try await send("GET", "v1/runs/" + Self.segment(id)) }

    /// The query of a paged listing: where the page starts (the previous page's `nextCursor`) and how many
    /// items it holds, each left out when nil (the server's first page, its default size).
    static func page(_ cursor: String?, _ limit: Int?) -> [URLQueryItem] {
        [
            cursor.map { URLQueryItem(name: "cursor", value: $0) },
            limit.map { URLQueryItem(name: "limit", value: String($0)) },
        ]
        .compactMap { $0 }
    }

    /// A key as one path segment: everything but unreserved characters percent-encoded.
    static func segment(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }
}
