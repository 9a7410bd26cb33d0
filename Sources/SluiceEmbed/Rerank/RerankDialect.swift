import Foundation
import SluiceCore
import SluiceHTTP

/// The two bodies of `/rerank` (``PipelineConfiguration/Search/Rerank/Kind/Shape``): the request for one
/// batch of documents and the scores in the answer, in the documents' order.
struct RerankDialect: Sendable {
    let shape: PipelineConfiguration.Search.Rerank.Kind.Shape

    /// TEI: `{query, texts, truncate: true, raw_scores: false}` (its server cuts what is still past the
    /// model's window). Cohere's shape: `{model, query, documents, top_n}` with `top_n` the whole batch,
    /// so that every document gets its score; `model` left out when none is named (vLLM serves one).
    func request(
        query: String,
        documents: [String],
        configuration: RemoteRerankerConfiguration
    ) -> HTTPRequest {
        var body = JSONRequestBody()
        switch shape {
        case .tei:
            body.append("query", .string(query))
            body.append("texts", .strings(documents))
            body.append("truncate", .bool(true))
            body.append("raw_scores", .bool(false))
        case .cohere:
            if let model = configuration.model { body.append("model", .string(model)) }
            body.append("query", .string(query))
            body.append("documents", .strings(documents))
            body.append("top_n", .int(documents.count))
        }
        var headers: [(String, String)] = []
        if let key = configuration.apiKey { headers.append(("Authorization", "Bearer \(key)")) }
        return .postJSON(configuration.url, body: body.body, headers: headers)
    }

    /// One score per document, in the documents' order, from a 2xx answer.
    /// - Throws: ``SluiceError/Code/dependencyUnavailable`` for an answer that is not the shape's, or that
    ///   does not score every document exactly once with a finite number.
    func scores(from response: HTTPResponse, count: Int) throws -> [Double] {
        let json = try? JSONSerialization.jsonObject(with: Data(response.body))
        let items: [[String: Any]]?
        let scoreKey: String
        switch shape {
        case .tei:
            items = json as? [[String: Any]]
            scoreKey = "score"
        case .cohere:
            items = (json as? [String: Any])?["results"] as? [[String: Any]]
            scoreKey = "relevance_score"
        }
        guard let items else {
            throw SluiceError(
                .dependencyUnavailable,
                "the reranker's answer is not \(shape == .tei ? "a list of {index, score}" : "{results: [{index, relevance_score}]}")"
            )
        }
        var scores = [Double?](repeating: nil, count: count)
        for item in items {
            guard let index = (item["index"] as? NSNumber)?.intValue, (0..<count).contains(index),
                scores[index] == nil
            else {
                throw SluiceError(
                    .dependencyUnavailable,
                    "the reranker's answer has a missing, repeated or out-of-range index"
                )
            }
            guard let score = (item[scoreKey] as? NSNumber)?.doubleValue, score.isFinite else {
                throw SluiceError(
                    .dependencyUnavailable,
                    "the reranker's answer has a \(scoreKey) that is not a number"
                )
            }
            scores[index] = score
        }
        guard scores.allSatisfy({ $0 != nil }) else {
            throw SluiceError(
                .dependencyUnavailable,
                "the reranker scored \(items.count) of the \(count) documents it was sent"
            )
        }
        return scores.map { $0! }
    }

    /// What a non-2xx answer means: OpenAI's conventions (401/403 refused, 429 rate limited, 413 and a 400
    /// about size too large, 408/409/5xx transient), and TEI's 429 (its queue is full).
    func classify(_ response: HTTPResponse, batchSize: Int) -> ProviderAnswer {
        if shape == .tei, response.status == 429 {
            return .rateLimited("HTTP 429 (TEI queue full): \(providerMessage(response))")
        }
        return ProviderAnswer(response, batchSize: batchSize)
    }
}
