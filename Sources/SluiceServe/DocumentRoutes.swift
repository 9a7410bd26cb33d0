import Foundation
import Hummingbird
import SluiceCore
import SluicePipeline
import SluiceState

/// `GET /v1/documents` (paged from the checkpoint) and `GET /v1/documents/{key}` (its record and its
/// chunks from the store). A key holds slashes: it is percent-encoded into one path segment
/// (`reports%2F2026%2Fq1.pdf`), as docs/SERVE.md says.
struct DocumentRoutes: Sendable {
    let checkpoint: CheckpointReader
    let sink: any VectorSink

    static let maxLimit = 1000

    struct Page: Encodable {
        var documents: [DocumentSummary]
        /// Pass as `cursor` for the next page; absent on the last.
        var nextCursor: String?
        enum CodingKeys: String, CodingKey {
            case documents
            case nextCursor = "next_cursor"
        }
    }

    struct DocumentSummary: Encodable {
        var key: String
        var status: String
        var chunks: Int
        var size: Int
        var attempts: Int
        var updatedAt: Double
        var error: DocumentRecord.Failure?
        enum CodingKeys: String, CodingKey {
            case key, status, chunks, size, attempts, error
            case updatedAt = "updated_at"
        }

        init(_ record: DocumentRecord) {
            key = record.key
            status = record.status.rawValue
            chunks = record.chunkIDs.count
            size = record.size
            attempts = record.attempts
            updatedAt = record.updatedAt
            error = record.error
        }
    }

    /// One record of a document in the store.
    struct StoredChunk: Encodable {
        var id: String
        var ordinal: Int
        var text: String
        var metadata: [String: MetadataValue]

        init(_ record: VectorRecord) {
            id = record.id.description
            ordinal = record.ordinal
            text = record.text
            metadata = record.metadata
        }
    }

    struct Detail: Encodable {
        var document: DocumentSummary
        /// The document's records in the store, in order; nil when the store cannot list them by key.
        var chunks: [StoredChunk]?
        /// Why `chunks` is missing.
        var chunksUnavailable: String?
        enum CodingKeys: String, CodingKey {
            case document, chunks
            case chunksUnavailable = "chunks_unavailable"
        }
    }

    /// The statuses `status=` may name; any other value, or a parameter the route does not take, is a 400.
    static let statuses: Set<String> = [DocumentRecord.Status.indexed.rawValue, DocumentRecord.Status.failed.rawValue]
    static let parameters: Set<String> = ["status", "cursor", "limit"]

    func list(_ request: Request) throws -> Response {
        let query = request.uri.queryParameters
        for (name, _) in query where !Self.parameters.contains(String(name)) {
            throw APIError.badRequest("\(name): not a parameter of /v1/documents (status, cursor, limit)")
        }
        if let status = query["status"], !Self.statuses.contains(String(status)) {
            throw APIError.badRequest("status: one of \(Self.statuses.sorted().joined(separator: ", "))")
        }
        var limit = 100
        if let text = query["limit"] {
            guard let value = Int(String(text)), (1...Self.maxLimit).contains(value) else {
                throw APIError.badRequest("limit: an integer from 1 to \(Self.maxLimit)")
            }
            limit = value
        }
        let status = query["status"].map(String.init)
        let cursor = query["cursor"].map(String.init)
        var documents: [DocumentSummary] = []
        var more = false
        try checkpoint.open().forEachDocument { record in
            guard !more else { return }
            if let cursor, record.key <= cursor { return }
            if let status, record.status.rawValue != status { return }
            if documents.count == limit {
                more = true
                return
            }
            documents.append(DocumentSummary(record))
        }
        return try JSONResponse.make(Page(documents: documents, nextCursor: more ? documents.last?.key : nil))
    }

    func detail(key: String) async throws -> Response {
        guard let record = try checkpoint.open().document(key) else {
            throw APIError.notFound("no document \(key) in the checkpoint")
        }
        var detail = Detail(document: DocumentSummary(record))
        if record.chunkIDs.isEmpty {
            detail.chunks = []
        } else {
            do {
                detail.chunks = try await chunks(of: key, count: record.chunkIDs.count)
            } catch let error as SluiceError where error.code == .usage {
                detail.chunksUnavailable = error.message
            }
        }
        return try JSONResponse.make(detail)
    }

    /// The store has no fetch by key: a vector search filtered on `document_key`, deep enough for every
    /// chunk, ordered by ordinal.
    private func chunks(of key: String, count: Int) async throws -> [StoredChunk] {
        let dimensions = try await sink.info().dimensions ?? 0
        guard dimensions > 0 else { return [] }
        let probe = [Float](repeating: 1 / Float(dimensions).squareRoot(), count: dimensions)
        let hits = try await sink.search(
            SearchRequest(
                mode: .vector,
                vector: probe,
                k: min(count, SearchQuery.maxK),
                filter: .compare("document_key", .equal, .string(key))
            )
        )
        return hits.map { StoredChunk($0.record) }.sorted { $0.ordinal < $1.ordinal }
    }
}
