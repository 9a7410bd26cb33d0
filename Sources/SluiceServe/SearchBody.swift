import Foundation
import SluiceCore
import SluicePipeline

/// `POST /v1/search`'s body: `{query, k, filter, mode, fusion, min_score, collapse, rerank}` (docs/openapi.json,
/// `SearchRequest`). Read by hand, not with `Decodable`: the filter is free-form JSON, and every mistake
/// must answer 400 naming the field.
struct SearchBody {
    var query: SearchQuery

    /// - Parameter search: The pipeline's `search` section, whose parameters (`search.rrf_k`,
    ///   `search.vector_weight`, `search.question_weight`) the rule a `fusion` names takes.
    init(_ object: [String: Any], maxK: Int, search: PipelineConfiguration.Search = .init()) throws {
        let known: Set<String> = ["query", "k", "filter", "mode", "fusion", "min_score", "collapse", "rerank"]
        if let unknown = object.keys.sorted().first(where: { !known.contains($0) }) {
            throw APIError.badRequest("unknown field \(unknown)")
        }
        guard let text = object["query"] as? String else { throw APIError.badRequest("query: a string is required") }
        guard !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
            throw APIError.badRequest("query: must not be empty")
        }
        var query = SearchQuery(text: text)
        if let k = object["k"] {
            guard let number = k as? NSNumber, !Self.isBool(number), let integer = Int(exactly: number.doubleValue)
            else { throw APIError.badRequest("k: an integer is required") }
            guard (1...maxK).contains(integer) else { throw APIError.badRequest("k: must be between 1 and \(maxK)") }
            query.k = integer
        }
        if let filter = object["filter"], !(filter is NSNull) {
            do {
                query.filter = try SearchFilter(json: filter)
            } catch let error as SluiceError {
                throw APIError.badRequest("filter: \(error.message)")
            }
        }
        if let mode = object["mode"], !(mode is NSNull) {
            guard let name = mode as? String, let parsed = SearchMode(rawValue: name) else {
                throw APIError.badRequest("mode: one of vector, keyword, hybrid")
            }
            query.mode = parsed
        }
        if let value = object["fusion"], !(value is NSNull) {
            guard let name = value as? String, let named = search.fusion(named: name) else {
                throw APIError.badRequest("fusion: one of \(SearchFusion.names.joined(separator: ", "))")
            }
            query.fusion = named
        }
        if let minScore = object["min_score"], !(minScore is NSNull) {
            guard let number = minScore as? NSNumber, !Self.isBool(number), number.doubleValue.isFinite else {
                throw APIError.badRequest("min_score: a number is required")
            }
            query.minScore = number.doubleValue
        }
        if let collapse = object["collapse"], !(collapse is NSNull) {
            guard let number = collapse as? NSNumber, Self.isBool(number) else {
                throw APIError.badRequest("collapse: true or false")
            }
            query.collapseDuplicates = number.boolValue
        }
        if let rerank = object["rerank"], !(rerank is NSNull) {
            guard let number = rerank as? NSNumber, Self.isBool(number) else {
                throw APIError.badRequest("rerank: true or false")
            }
            query.rerank = number.boolValue
        }
        self.query = query
    }

    /// JSONSerialization reads `true` as an NSNumber too.
    private static func isBool(_ number: NSNumber) -> Bool {
        #if canImport(Darwin)
        return CFGetTypeID(number) == CFBooleanGetTypeID()
        #else
        return String(cString: number.objCType) == "c"  // swift-corelibs-foundation's boolean
        #endif
    }
}
