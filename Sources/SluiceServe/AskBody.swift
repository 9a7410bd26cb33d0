import Foundation
import SluiceCore
import SluicePipeline

/// `POST /v1/ask`'s body: `{question, k, filter, mode, fusion, stream, rerank}` (docs/openapi.json, `AskRequest`), read as
/// ``SearchBody`` reads a search: every mistake answers 400 naming the field.
struct AskBody {
    var question: String
    var k: Int?
    var filter: SearchFilter?
    var mode: SearchMode?
    /// nil: the answerer's (`search.fusion`).
    var fusion: SearchFusion?
    var stream: Bool
    /// false: the reranker (`search.rerank`) is skipped for this question.
    var rerank: Bool

    init(_ object: [String: Any], maxK: Int, search: PipelineConfiguration.Search = .init()) throws {
        let known: Set<String> = ["question", "k", "filter", "mode", "fusion", "stream", "rerank"]
        if let unknown = object.keys.sorted().first(where: { !known.contains($0) }) {
            throw APIError.badRequest("unknown field \(unknown)")
        }
        guard let question = object["question"] as? String else {
            throw APIError.badRequest("question: a string is required")
        }
        guard !question.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
            throw APIError.badRequest("question: must not be empty")
        }
        // The search fields read as a search's would (k, filter, mode, fusion, rerank).
        var searchFields = object.filter { ["k", "filter", "mode", "fusion", "rerank"].contains($0.key) }
        searchFields["query"] = question
        let search = try SearchBody(searchFields, maxK: maxK, search: search)
        self.question = question
        k = object["k"] == nil ? nil : search.query.k
        filter = search.query.filter
        mode = search.query.mode
        rerank = search.query.rerank
        fusion = search.query.fusion
        stream = false
        if let value = object["stream"], !(value is NSNull) {
            guard let flag = value as? Bool, let number = value as? NSNumber, String(cString: number.objCType) == "c"
            else { throw APIError.badRequest("stream: true or false") }
            stream = flag
        }
    }
}
