import SluiceCore

/// A ``SearchFilter`` as Chroma's `where` (`$eq`, `$ne`, `$gt`, `$gte`, `$lt`, `$lte`, `$in`, `$contains`,
/// `$and`/`$or` of at least two), as chromadb 1.5's `validate_where` accepts it.
///
/// Chroma's `$eq` does not look into lists and its `$contains` does not match a plain value, so text
/// equality asks both, unless the field is known: `document_key` is text, the built-in `headings` and
/// `folders` are lists. Times are Unix seconds (``NumericTimes``). Chroma has no `$exists`, and its `$ne`
/// matches records without the field; so `exists` is refused, and `!=` is expressed without `$ne` (a
/// number as `< or >`, a boolean as the other boolean) or refused (text, except on `document_key`).
enum ChromaWhere {
    /// List fields the pipeline writes.
    static let listFields: Set<String> = ["headings", "folders"]
    /// Keys the sink itself writes into a record's metadata.
    static let reservedKeys: Set<String> = ["ordinal", NumericTimes.marker]

    static func compile(_ filter: SearchFilter) throws -> JSONValue {
        switch filter {
        case .and(let parts): return combined("$and", try parts.map(compile))
        case .or(let parts): return combined("$or", try parts.map(compile))
        case .exists(let field):
            throw SluiceError.filterRefused(
                "chroma",
                "\(field) exists",
                "Chroma has no $exists; use a condition on the field's value (\(field) >= 0, \(field) in (…))"
            )
        case .prefix:
            let folder = try filter.folderPrefix(in: "chroma")
            return condition("folders", "$contains", .string(folder))
        case .oneOf(let field, let values):
            try check(field)
            let numeric = values.map(\.numericTimes)
            let ints = numeric.allSatisfy { if case .int = $0 { return true } else { return false } }
            let texts = numeric.allSatisfy { if case .string = $0 { return true } else { return false } }
            if ints && !listFields.contains(field) || texts && field == SearchFilter.documentKeyField {
                return .member(field, .member("$in", .array(numeric.map(JSONValue.value))))
            }
            return try compile(.or(values.map { .compare(field, .equal, $0) }))
        case .compare(let field, let comparison, let value):
            try check(field)
            let operand = value.numericTimes
            switch comparison {
            case .equal: return equal(field, operand)
            case .notEqual: return try notEqual(field, operand, shown: "\(filter)")
            default:
                let names: [SearchFilter.Comparison: String] = [
                    .less: "$lt", .lessOrEqual: "$lte", .greater: "$gt", .greaterOrEqual: "$gte",
                ]
                return condition(field, names[comparison]!, operand)
            }
        }
    }

    static func equal(_ field: String, _ value: MetadataValue) -> JSONValue {
        guard case .string = value else { return condition(field, "$eq", value) }
        if field == SearchFilter.documentKeyField { return condition(field, "$eq", value) }
        if listFields.contains(field) { return condition(field, "$contains", value) }
        return combined("$or", [condition(field, "$eq", value), condition(field, "$contains", value)])
    }

    static func notEqual(_ field: String, _ value: MetadataValue, shown: String) throws -> JSONValue {
        switch value {
        case .int, .double:
            return combined("$or", [condition(field, "$lt", value), condition(field, "$gt", value)])
        case .bool(let flag):
            return condition(field, "$eq", .bool(!flag))
        case .string where field == SearchFilter.documentKeyField:
            return condition(field, "$ne", value)
        default:
            throw SluiceError.filterRefused(
                "chroma",
                shown,
                "Chroma's $ne also matches records without the field and it has no $exists; use = or in with the values you want"
            )
        }
    }

    static func check(_ field: String) throws {
        // `ordinal` is the built-in field (the record's position), which the sink writes as a number.
        guard field == SearchFilter.ordinalField || !reservedKeys.contains(field), !field.hasPrefix("$"),
            !field.hasPrefix("#")
        else {
            throw SluiceError.filterRefused(
                "chroma",
                "the field \"\(field)\"",
                "the sink keeps its own data under that key; filter on document_key or the chunk's metadata"
            )
        }
    }

    static func condition(_ field: String, _ operation: String, _ operand: MetadataValue) -> JSONValue {
        .member(field, .member(operation, .value(operand)))
    }

    /// `$and`/`$or` need two operands or more: one stands alone.
    static func combined(_ operation: String, _ parts: [JSONValue]) -> JSONValue {
        parts.count == 1 ? parts[0] : .member(operation, .array(parts))
    }
}

extension ChromaSink {
    /// Vector search with the filter in Chroma's own `where`.
    public func search(_ request: SearchRequest) async throws -> [SearchHit] {
        try request.requireVectorMode(name)
        return try await search(request.vector, k: request.k, where: try request.filter.map(ChromaWhere.compile))
    }
}
