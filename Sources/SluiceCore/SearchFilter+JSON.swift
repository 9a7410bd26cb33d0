import Foundation

/// The JSON form of a filter, for programs and the HTTP API, in the shape Pinecone, Chroma and MongoDB
/// users know:
///
///     {"format": "pdf", "page": {"$gte": 3, "$lte": 9}}
///     {"$or": [{"document_key": {"$prefix": "reports/"}}, {"tags": {"$in": ["draft"]}}]}
///     {"title": {"$exists": true}}
///
/// Operators: `$eq`, `$ne`, `$lt`, `$lte`, `$gt`, `$gte`, `$in`, `$prefix`, `$exists` (true only); `$and` and
/// `$or` take lists. Several keys in one object are all required. Times are RFC 3339 strings or dates
/// (`2026-01-01`) under a range operator. A filter past ``FilterLimits/standard`` (nesting, conditions) is
/// refused.
extension SearchFilter {
    public init(json: Any) throws {
        self = try SearchFilter(json: json, depth: 1)
        try check(.standard)
    }

    private init(json: Any, depth: Int) throws {
        guard depth <= FilterLimits.standard.maxDepth else {
            throw SearchFilter.error("nested deeper than \(FilterLimits.standard.maxDepth) levels of $and/$or")
        }
        guard let object = json as? [String: Any] else { throw SearchFilter.error("a filter must be a JSON object") }
        var parts: [SearchFilter] = []
        for (key, value) in object.sorted(by: { $0.key < $1.key }) {
            switch key {
            case "$and", "$or":
                guard let list = value as? [Any], !list.isEmpty else {
                    throw SearchFilter.error("\(key) needs a non-empty list of filters")
                }
                let inner = try list.map { try SearchFilter(json: $0, depth: depth + 1) }
                parts.append(inner.count == 1 ? inner[0] : (key == "$and" ? .and(inner) : .or(inner)))
            case let field where field.hasPrefix("$"):
                throw SearchFilter.error("unknown operator \(field) at the top level (use $and or $or)")
            default:
                parts.append(contentsOf: try SearchFilter.conditions(field: key, json: value))
            }
        }
        guard !parts.isEmpty else { throw SearchFilter.error("the filter is empty") }
        self = parts.count == 1 ? parts[0] : .and(parts)
    }

    private static func conditions(field: String, json: Any) throws -> [SearchFilter] {
        guard let operators = json as? [String: Any] else { return [.compare(field, .equal, try value(json, field))] }
        guard !operators.isEmpty else { throw SearchFilter.error("\(field): an empty condition") }
        return try operators.sorted(by: { $0.key < $1.key }).map { name, operand in
            switch name {
            case "$in":
                guard let list = operand as? [Any], !list.isEmpty else {
                    throw SearchFilter.error("\(field): $in needs a non-empty list")
                }
                return .oneOf(field, try list.map { try value($0, field) })
            case "$prefix":
                guard let prefix = operand as? String else { throw SearchFilter.error("\(field): $prefix needs text") }
                return .prefix(field, prefix)
            case "$exists":
                guard let flag = operand as? Bool, flag else {
                    throw SearchFilter.error("\(field): $exists takes true (absence is not supported by every store)")
                }
                return .exists(field)
            default:
                let symbols = ["$eq": "=", "$ne": "!=", "$lt": "<", "$lte": "<=", "$gt": ">", "$gte": ">="]
                guard let comparison = symbols[name].flatMap(Comparison.init(rawValue:)) else {
                    throw SearchFilter.error("\(field): unknown operator \(name)")
                }
                var literal = try value(operand, field)
                if comparison.isRange, case .string(let text) = literal, let date = SearchFilter.time(text) {
                    literal = .time(date)
                }
                if comparison.isRange, literal.number == nil {
                    throw SearchFilter.error("\(field): \(name) compares numbers and times, not \(literal.text)")
                }
                return .compare(field, comparison, literal)
            }
        }
    }

    private static func value(_ json: Any, _ field: String) throws -> MetadataValue {
        guard let value = MetadataValue(json: json), !(json is [Any]) else {
            throw SearchFilter.error("\(field): a value must be a string, number or boolean")
        }
        return value
    }

    /// The JSON form (what ``init(json:)`` reads).
    public var jsonObject: [String: Any] {
        switch self {
        case .and(let parts): return ["$and": parts.map(\.jsonObject)]
        case .or(let parts): return ["$or": parts.map(\.jsonObject)]
        case .exists(let field): return [field: ["$exists": true]]
        case .prefix(let field, let prefix): return [field: ["$prefix": prefix]]
        case .oneOf(let field, let values): return [field: ["$in": values.map(\.jsonObject)]]
        case .compare(let field, let comparison, let value):
            let names: [Comparison: String] = [
                .equal: "$eq", .notEqual: "$ne", .less: "$lt", .lessOrEqual: "$lte", .greater: "$gt",
                .greaterOrEqual: "$gte",
            ]
            return [field: [names[comparison]!: value.jsonObject]]
        }
    }
}
