import SluiceCore

/// A ``SearchFilter`` as an OpenAI vector store's attribute filter: comparison filters (`eq`, `ne`,
/// `gt`, `gte`, `lt`, `lte`, `in`) combined by compound filters (`and`, `or`).
///
/// Times are compared as Unix seconds, as the sink writes them (`OpenAIVectorStoreAttributes`). What
/// the API cannot express exactly is refused before the search: a prefix (`^=`: no prefix match, and no
/// list attribute to hold a document's folders), `exists` (no existence test), `!=` on a field a file may
/// lack (Sluice's `!=` never matches a record without the field; only `document_key` and `ordinal`, which
/// every file has, take it), a list value, and the sink's own keys.
enum OpenAIVectorStoreFilter {
    static let store = "openai-vector-store"

    static func compile(_ filter: SearchFilter) throws -> JSONValue {
        switch filter {
        case .and(let parts): return compound("and", try parts.map(compile))
        case .or(let parts): return compound("or", try parts.map(compile))
        case .exists:
            throw SluiceError.filterRefused(
                store,
                "\(filter)",
                "the API has no existence test; compare the field with a value instead"
            )
        case .prefix:
            throw SluiceError.filterRefused(
                store,
                "\(filter)",
                "the API has no prefix match; compare document_key with whole keys (=, in)"
            )
        case .oneOf(let field, let values):
            try check(field)
            let plain = values.map(\.numericTimes).allSatisfy {
                switch $0 {
                case .string, .int, .double: return true
                default: return false
                }
            }
            guard plain else { return try compile(.or(values.map { .compare(field, .equal, $0) })) }
            return comparison(field, "in", .array(values.map { .value($0.numericTimes) }))
        case .compare(let field, let operation, let value):
            try check(field)
            if case .strings = value {
                throw SluiceError.filterRefused(store, "\(filter)", "attributes hold no lists; compare with one value")
            }
            if operation == .notEqual, ![SearchFilter.documentKeyField, SearchFilter.ordinalField].contains(field) {
                throw SluiceError.filterRefused(
                    store,
                    "\(filter)",
                    "the API's ne also matches files without the field, which != never does; only document_key and ordinal, which every file has, take !="
                )
            }
            let names: [SearchFilter.Comparison: String] = [
                .equal: "eq", .notEqual: "ne", .less: "lt", .lessOrEqual: "lte", .greater: "gt", .greaterOrEqual: "gte",
            ]
            return comparison(field, names[operation]!, .value(value.numericTimes))
        }
    }

    static func check(_ field: String) throws {
        guard !OpenAIVectorStoreAttributes.reservedKeys.contains(field) else {
            throw SluiceError.filterRefused(
                store,
                "the field \"\(field)\"",
                "the sink keeps its own data under that key; filter on document_key or the document's metadata"
            )
        }
        guard field.count <= OpenAIVectorStoreAttributes.maxKeyLength else {
            throw SluiceError.filterRefused(
                store,
                "the field \"\(field)\"",
                "attribute keys are at most \(OpenAIVectorStoreAttributes.maxKeyLength) characters, so no file holds it"
            )
        }
    }

    static func comparison(_ key: String, _ type: String, _ value: JSONValue) -> JSONValue {
        .object(["type": .value(.string(type)), "key": .value(.string(key)), "value": value])
    }

    static func compound(_ type: String, _ filters: [JSONValue]) -> JSONValue {
        .object(["type": .value(.string(type)), "filters": .array(filters)])
    }
}
