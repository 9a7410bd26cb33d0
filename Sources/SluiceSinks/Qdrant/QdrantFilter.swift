import SluiceCore

/// A ``SearchFilter`` as Qdrant's filter JSON (`must`/`should`/`must_not` of field conditions).
///
/// The payload holds `document_key` and `ordinal` at the top and the chunk's metadata under `metadata`, so a field
/// `page` is the key `metadata.page`. Numbers match by a `range` with equal bounds (Qdrant's `match`
/// takes no floats); times are RFC 3339 text, compared by Qdrant's datetime `range`; a condition on a
/// list matches when any element does. `!=` and `exists` exclude points whose field is missing or empty
/// (`is_empty`). Qdrant has no prefix match: only `document_key ^= "folder/"` is expressed, through the
/// built-in `folders` list; any other prefix is refused.
enum QdrantFilter {
    /// The filter object of a search request.
    static func compile(_ filter: SearchFilter) throws -> JSONValue {
        let compiled = try condition(filter)
        if case .object(let members) = compiled,
            members["must"] != nil || members["should"] != nil
                || members["must_not"] != nil
        {
            return compiled
        }
        return .member("must", .array([compiled]))
    }

    static func condition(_ filter: SearchFilter) throws -> JSONValue {
        switch filter {
        case .and(let parts): return .member("must", .array(try parts.map(condition)))
        case .or(let parts): return .member("should", .array(try parts.map(condition)))
        case .exists(let field):
            let key = try key(field)
            return .member("must_not", .array([isEmpty(key), match(key, .string(""))]))
        case .prefix:
            let folder = try filter.folderPrefix(in: "qdrant")
            return match("metadata.folders", .string(folder))
        case .oneOf(let field, let values):
            let key = try key(field)
            let texts = values.compactMap { value -> String? in
                if case .string(let text) = value { return text }
                return nil
            }
            if texts.count == values.count {
                return .object([
                    "key": .value(.string(key)), "match": .member("any", .array(texts.map { .value(.string($0)) })),
                ])
            }
            return .member("should", .array(values.map { equal(key, $0) }))
        case .compare(let field, let comparison, let value):
            let key = try key(field)
            switch comparison {
            case .equal: return equal(key, value)
            case .notEqual: return .member("must_not", .array([equal(key, value), isEmpty(key)]))
            default:
                let bound: MetadataValue = if case .time = value { .string(value.text) } else { value }
                let names: [SearchFilter.Comparison: String] = [
                    .less: "lt", .lessOrEqual: "lte", .greater: "gt", .greaterOrEqual: "gte",
                ]
                return range(key, [names[comparison]!: bound])
            }
        }
    }

    /// The payload key of a field.
    static func key(_ field: String) throws -> String {
        if field == SearchFilter.documentKeyField || field == SearchFilter.ordinalField { return field }
        guard !field.contains(where: { ".[]\"".contains($0) }) else {
            throw SluiceError.filterRefused(
                "qdrant",
                "the field \"\(field)\"",
                "Qdrant reads . and [] in a key as a path; filter on metadata keys without them"
            )
        }
        return "metadata.\(field)"
    }

    static func equal(_ key: String, _ value: MetadataValue) -> JSONValue {
        switch value {
        case .int, .double: return range(key, ["gte": value, "lte": value])
        case .time: return range(key, ["gte": .string(value.text), "lte": .string(value.text)])
        default: return match(key, value)
        }
    }

    static func match(_ key: String, _ value: MetadataValue) -> JSONValue {
        .object(["key": .value(.string(key)), "match": .member("value", .value(value))])
    }

    static func range(_ key: String, _ bounds: [String: MetadataValue]) -> JSONValue {
        .object(["key": .value(.string(key)), "range": .object(bounds.mapValues(JSONValue.value))])
    }

    static func isEmpty(_ key: String) -> JSONValue {
        .member("is_empty", .member("key", .value(.string(key))))
    }
}

extension QdrantSink {
    /// Vector search with the filter in Qdrant's own `filter` (applied during the HNSW search).
    public func search(_ request: SearchRequest) async throws -> [SearchHit] {
        try request.requireVectorMode(name)
        return try await search(request.vector, k: request.k, filter: try request.filter.map(QdrantFilter.compile))
    }
}
