import Foundation
import Hummingbird
import SluiceCore
import SluicePipeline
import SluiceState

/// `GET /v1/documents` (paged from the checkpoint) and `GET /v1/documents/{key}` (its record and one
/// page of its chunks from the store, in order). A key holds slashes: it is percent-encoded into one path
/// segment (`reports%2F2026%2Fq1.pdf`), as docs/SERVE.md says.
///
/// Keys are bytes: `/v1/documents/{key}` finds the document whose key has exactly these bytes (the NFD
/// spelling of a name is another document than its NFC twin), and pages follow the checkpoint's byte
/// order, with cursors compared in that order (Swift's `String` order differs for such keys).
///
/// A request takes the served generation once (``ServedGeneration/snapshot``) and reads its document
/// records and its store's chunks: after a promote, both are the new generation's, never one of each.
struct DocumentRoutes: Sendable {
    let checkpoint: CheckpointReader
    let served: ServedGeneration
    let access: PipelineConfiguration.Access

    static let maxLimit = 1000
    /// Chunks on one page of `GET /v1/documents/{key}` when `limit` is not given.
    static let defaultChunkLimit = 100

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

        /// - Parameter readers: The access field, hidden from a restricted caller (docs/ACCESS.md); nil to keep it.
        init(_ record: VectorRecord, hiding readers: String? = nil) {
            id = record.id.description
            ordinal = record.ordinal
            text = record.text
            metadata = record.metadata
            if let readers { metadata[readers] = nil }
        }
    }

    struct Detail: Encodable {
        var document: DocumentSummary
        /// One page of the document's records in the store, by ordinal; nil when the store cannot list
        /// them by key.
        var chunks: [StoredChunk]?
        /// Why `chunks` is missing.
        var chunksUnavailable: String?
        /// Whether chunks follow this page (then `next_cursor` is set): never a silent partial answer.
        var truncated = false
        /// Pass as `cursor` for the next page of chunks; absent on the last.
        var nextCursor: String?
        enum CodingKeys: String, CodingKey {
            case document, chunks, truncated
            case chunksUnavailable = "chunks_unavailable"
            case nextCursor = "next_cursor"
        }
    }

    /// The statuses `status=` may name; any other value, or a parameter the route does not take, is a 400.
    static let statuses: Set<String> = [DocumentRecord.Status.indexed.rawValue, DocumentRecord.Status.failed.rawValue]
    static let parameters: Set<String> = ["status", "cursor", "limit"]

    /// - Parameter readable: The caller's access filter (nil: unrestricted). A restricted caller is listed
    ///   the documents it may read, the store asked with that filter (``readableDocuments(after:status:limit:readable:)``).
    func list(_ request: Request, readable: SearchFilter? = nil) async throws -> Response {
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
        if let readable {
            let (documents, more) = try await readableDocuments(
                after: cursor,
                status: status,
                limit: limit,
                readable: readable
            )
            return try JSONResponse.make(Page(documents: documents, nextCursor: more ? documents.last?.key : nil))
        }
        var documents: [DocumentSummary] = []
        var more = false
        try checkpoint.open().forEachDocument { record in
            guard !more else { return }
            // In the checkpoint's (LMDB's) byte order, which the walk follows.
            if let cursor, !cursor.utf8.lexicographicallyPrecedes(record.key.utf8) { return }
            if let status, record.status.rawValue != status { return }
            if documents.count == limit {
                more = true
                return
            }
            documents.append(DocumentSummary(record))
        }
        return try JSONResponse.make(Page(documents: documents, nextCursor: more ? documents.last?.key : nil))
    }

    /// - Parameters:
    ///   - cursor: The first ordinal of the page (`next_cursor` of the page before); nil for the first.
    ///   - limit: Chunks on the page, 1 to ``maxLimit`` (``defaultChunkLimit`` when nil).
    ///   - readable: The caller's access filter (nil: unrestricted). A document none of whose records it
    ///     matches answers 404 exactly as a missing one does (docs/ACCESS.md).
    func detail(
        key: String,
        cursor: String? = nil,
        limit: String? = nil,
        readable: SearchFilter? = nil
    ) async throws -> Response {
        var first = 0
        if let cursor {
            guard let value = Int(cursor), value >= 0 else {
                throw APIError.badRequest("cursor: the next_cursor of the page before")
            }
            first = value
        }
        var count = Self.defaultChunkLimit
        if let limit {
            guard let value = Int(limit), (1...Self.maxLimit).contains(value) else {
                throw APIError.badRequest("limit: an integer from 1 to \(Self.maxLimit)")
            }
            count = value
        }
        // LMDB looks the key up by its bytes: an NFD key never finds its NFC twin.
        let missing = APIError.notFound("no document \(key) in the checkpoint")
        let served = self.served.snapshot
        let sink = served.searcher.sink
        let found = try checkpoint.open(generation: .some(served.generation)).document(key)
        // Asked of the store, with the access filter in its query: a record the caller may read. Asked for
        // a key the checkpoint does not hold as well, so that a missing document and an unreadable one
        // cost the same work (and time) before the same 404.
        if let readable,
            try await records(of: key, ordinals: 0..<Int.max, readable: readable, k: 1, in: sink).isEmpty
        {
            throw missing
        }
        guard let record = found else { throw missing }
        var detail = Detail(document: DocumentSummary(record))
        // Ordinals run from 0 to the number of chunks the checkpoint holds for the document.
        let total = record.chunkIDs.count
        if first >= total {
            detail.chunks = []
        } else {
            let end = first + min(count, total - first)  // never past Int.max, whatever the cursor
            do {
                detail.chunks = try await records(of: key, ordinals: first..<end, readable: readable, in: sink)
                    .map { StoredChunk($0, hiding: readable == nil ? nil : access.field) }
                    .sorted { $0.ordinal < $1.ordinal }
                if end < total {
                    detail.truncated = true
                    detail.nextCursor = String(end)
                }
            } catch let error as SluiceError where error.code == .usage {
                detail.chunksUnavailable = error.message
            }
        }
        return try JSONResponse.make(detail)
    }

    /// The store has no fetch by key: a vector search filtered on `document_key` (its exact bytes) and the
    /// page's `ordinal` range (and the caller's access filter), as deep as the page (or `k`).
    private func records(
        of key: String,
        ordinals: Range<Int>,
        readable: SearchFilter?,
        k: Int? = nil,
        in sink: any VectorSink
    ) async throws -> [VectorRecord] {
        try await Self.records(
            matching: .and(
                [
                    .compare(SearchFilter.documentKeyField, .equal, .string(key)),
                    .compare(SearchFilter.ordinalField, .greaterOrEqual, .int(ordinals.lowerBound)),
                    .compare(SearchFilter.ordinalField, .less, .int(ordinals.upperBound)),
                ] + (readable.map { [$0] } ?? [])
            ),
            k: k ?? ordinals.count,
            in: sink
        )
    }

    /// Up to `k` records of the store matching `filter`: a vector search with a fixed probe (the store
    /// has no fetch by condition), the filter inside the store's query.
    static func records(matching filter: SearchFilter, k: Int, in sink: any VectorSink) async throws -> [VectorRecord] {
        let dimensions = try await sink.info().dimensions ?? 0
        guard dimensions > 0 else { return [] }
        let probe = [Float](repeating: 1 / Float(dimensions).squareRoot(), count: dimensions)
        let hits = try await sink.search(SearchRequest(mode: .vector, vector: probe, k: k, filter: filter))
        return hits.map(\.record)
    }
}
