import Foundation
import SluiceCore
import SluiceHTTP

/// Hugging Face Text Embeddings Inference, native `/embed`: 413 means the batch is over its
/// `max_client_batch_size` (split it), 429 means its queue is full (back off, lower concurrency).
struct TEIDialect: EmbeddingDialect {
    func request(for texts: [String], configuration: RemoteEmbedderConfiguration) throws -> HTTPRequest {
        var body = JSONRequestBody()
        body.append("inputs", .strings(texts))
        body.append("truncate", .bool(false))
        body.append("normalize", .bool(true))
        var headers: [(String, String)] = []
        if let key = configuration.apiKey { headers.append(("Authorization", "Bearer \(key)")) }
        return .postJSON(joinURL(configuration.baseURL, "embed"), body: body.body, headers: headers)
    }

    func vectors(from response: HTTPResponse, count: Int) throws -> [[Float]] {
        guard let embeddings = try? JSONSerialization.jsonObject(with: Data(response.body)) as? [[NSNumber]],
            embeddings.count == count
        else {
            throw SluiceError(.embeddingFailed, "TEI's answer is not a list of \(count) vectors")
        }
        return embeddings.map { $0.map(\.floatValue) }
    }

    func classify(_ response: HTTPResponse, batchSize: Int) -> ProviderAnswer {
        let message = providerMessage(response)
        switch response.status {
        case 429:
            return .rateLimited("HTTP 429 (TEI queue full): \(message)")
        case 413:
            return batchSize > 1 ? .tooLarge("HTTP 413: \(message)") : .invalid("HTTP 413: \(message)")
        default:
            return OpenAIDialect(azure: false).classify(response, batchSize: batchSize)
        }
    }
}
