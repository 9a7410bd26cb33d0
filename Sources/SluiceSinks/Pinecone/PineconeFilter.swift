import SluiceCore

/// A ``SearchFilter`` as Pinecone's metadata filter (`$eq`, `$ne`, `$gt`, `$gte`, `$lt`, `$lte`, `$in`,
/// `$exists`, `$and`, `$or`).
///
/// `document_key` is a metadata field in Pinecone; times are held as Unix seconds (``NumericTimes``), so
/// a time compares as a number. A condition on a list of strings matches when any element does. `!=`
/// also asks `$exists`, so that records without the field never match (as ``SearchFilter/matches(_:)``
/// says), whatever Pinecone does with them. Pinecone has no prefix match: only `document_key ^=
/// "folder/"` is expressed, through the built-in `folders` list; any other prefix is refused.
enum PineconeFilter {
    /// Keys the sink itself writes into a record's metadata, which are not the chunk's metadata.
    static let reservedKeys: Set<String> = ["text", "ordinal", "text_truncated", "text_bytes", NumericTimes.marker]

    static func compile(_ filter: SearchFilter) throws -> JSONValue {
        switch filter {
        case .and(let parts): return .member("$and", .array(try parts.map(compile)))
        case .or(let parts): return .member("$or", .array(try parts.map(compile)))
        case .exists(let field): return try condition(field, "$exists", .value(.bool(true)))
        case .prefix:
            let folder = try filter.folderPrefix(in: "pinecone")
            return .member("folders", .member("$eq", .value(.string(folder))))
        case .oneOf(let field, let values):
            let plain = values.allSatisfy { value in
                switch value.numericTimes {
                case .string, .int, .double: return true
                default: return false
                }
            }
            guard plain else { return try compile(.or(values.map { .compare(field, .equal, $0) })) }
            return try condition(field, "$in", .array(values.map { .value($0.numericTimes) }))
        case .compare(let field, let comparison, let value):
            let names: [SearchFilter.Comparison: String] = [
                .equal: "$eq", .notEqual: "$ne", .less: "$lt", .lessOrEqual: "$lte", .greater: "$gt",
                .greaterOrEqual: "$gte",
            ]
            let compared = try condition(field, names[comparison]!, .value(value.numericTimes))
            guard comparison == .notEqual else { return compared }
            return .member("$and", .array([try condition(field, "$exists", .value(.bool(true))), compared]))
        }
    }

    static func condition(_ field: String, _ operation: String, _ operand: JSONValue) throws -> JSONValue {
        // `ordinal` is the built-in field (the record's position), which the sink writes as a number.
        guard field == SearchFilter.ordinalField || !reservedKeys.contains(field), !field.hasPrefix("$") else {
            throw SluiceError.filterRefused(
                "pinecone",
                "the field \"\(field)\"",
                "the sink keeps its own data under that key; filter on document_key or the chunk's metadata"
            )
        }
        return .member(field, .member(operation, operand))
    }
}

extension PineconeSink {
    /// Vector search with the filter in Pinecone's own metadata `filter`.
    public func search(_ request: SearchRequest) async throws -> [SearchHit] {
        try request.requireVectorMode(name)
        return try await search(request.vector, k: request.k, filter: try request.filter.map(PineconeFilter.compile))
    }
}
