import SluiceCore
import SluicePipeline
import SluiceState

extension DocumentRoutes {
    /// Keys asked of the store at once while listing for a restricted caller (one query each).
    static let readableBatch = 200

    /// `GET /v1/documents` for a restricted caller (docs/ACCESS.md): the checkpoint's documents after
    /// `cursor` (in its byte order, of `status` when given) that the caller may read, `limit` of them.
    ///
    /// The checkpoint knows no readers: the store is asked, a batch of keys at a time, which of them have a
    /// first record (ordinal 0) the caller's access filter matches, that filter inside the store's query as
    /// for a search. A document without records in the store (failed before its first write, or empty) is
    /// not listed. A page holds `limit` documents whenever more readable ones follow, and its cursor is the
    /// last key listed, so neither its size nor its cursor says anything of the documents between.
    /// - Returns: The page's documents, and whether readable documents follow it.
    func readableDocuments(
        after cursor: String?,
        status: String?,
        limit: Int,
        readable: SearchFilter
    ) async throws -> (documents: [DocumentSummary], more: Bool) {
        let served = self.served.snapshot
        let store = try checkpoint.open(generation: .some(served.generation))
        var documents: [DocumentSummary] = []
        var after = cursor
        var exhausted = false
        while documents.count <= limit, !exhausted {
            var candidates: [DocumentRecord] = []
            exhausted = true
            try store.forEachDocument { record in
                // In the checkpoint's (LMDB's) byte order, which the walk follows.
                if let after, !after.utf8.lexicographicallyPrecedes(record.key.utf8) { return }
                if let status, record.status.rawValue != status { return }
                guard candidates.count < Self.readableBatch else {
                    exhausted = false
                    return
                }
                candidates.append(record)
            }
            guard let last = candidates.last else { break }
            after = last.key
            let keys = try await Self.readableKeys(candidates.map(\.key), readable, in: served.searcher.sink)
            // Keys compared as bytes: Swift's `String ==` takes `café` (NFC) and `café` (NFD) for one key,
            // and a readable document's twin spelling would be listed with it.
            documents += candidates.filter { keys.contains(Array($0.key.utf8)) }.map(DocumentSummary.init)
        }
        return (Array(documents.prefix(limit)), documents.count > limit)
    }

    /// Which of `keys` have a first record the store finds under `readable` (as UTF-8 bytes): one query.
    static func readableKeys(
        _ keys: [String],
        _ readable: SearchFilter,
        in sink: any VectorSink
    ) async throws -> Set<[UInt8]> {
        let filter = SearchFilter.and([
            .oneOf(SearchFilter.documentKeyField, keys.map(MetadataValue.string)),
            .compare(SearchFilter.ordinalField, .greaterOrEqual, .int(0)),
            .compare(SearchFilter.ordinalField, .less, .int(1)),
            readable,
        ])
        return Set(try await records(matching: filter, k: keys.count, in: sink).map { Array($0.documentKey.utf8) })
    }
}
