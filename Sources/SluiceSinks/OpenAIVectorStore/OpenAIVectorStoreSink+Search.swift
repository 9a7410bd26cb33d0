import SluiceCore

extension OpenAIVectorStoreSink {
    /// The store's own ranking of the query's text (`POST /vector_stores/{id}/search`), with the filter as
    /// attribute filters (`OpenAIVectorStoreFilter`). Only `vector` mode: the API has no keyword ranking
    /// of its own to ask for, so keyword and hybrid are refused. At most 50 results (the API's limit); a
    /// file's several matching chunks are several hits of the same record id.
    /// Attributes hold no lists: a record's readers are dropped, so access control is refused
    /// (``PipelineConfiguration/Access/requireExpressible(in:store:)``).
    public var filterLimits: FilterLimits {
        var limits = FilterLimits.standard
        limits.holdsLists = false
        return limits
    }

    public func search(_ request: SearchRequest) async throws -> [SearchHit] {
        try request.requireVectorMode("openai-vector-store")
        let filters = try request.filter.map(OpenAIVectorStoreFilter.compile)
        guard let storeID = try await storeID() else { return [] }
        struct Query: Encodable {
            var query: String
            var maxNumResults: Int
            var filters: JSONValue?
            var rewriteQuery = false
            enum CodingKeys: String, CodingKey {
                case query, filters
                case maxNumResults = "max_num_results"
                case rewriteQuery = "rewrite_query"
            }
        }
        struct Match: Decodable {
            var fileID: String
            var score: Float?
            var attributes: [String: MetadataValue]?
            var content: [Part]?
            struct Part: Decodable { var text: String? }
            enum CodingKeys: String, CodingKey {
                case score, attributes, content
                case fileID = "file_id"
            }
        }
        let page = try await http.decode(
            Page<Match>.self,
            "POST",
            "/vector_stores/\(StoreHTTP.segment(storeID))/search",
            json: try StoreHTTP.encode(
                Query(query: request.text, maxNumResults: min(Self.maxResults, max(1, request.k)), filters: filters)
            )
        )
        return page.data.map { result in
            SearchHit(
                score: result.score ?? 0,
                record: OpenAIVectorStoreAttributes.record(
                    attributes: result.attributes ?? [:],
                    text: (result.content ?? []).compactMap(\.text).joined(separator: "\n"),
                    fileID: result.fileID
                )
            )
        }
    }
}
