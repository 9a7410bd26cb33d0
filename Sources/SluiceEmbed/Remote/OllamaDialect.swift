import Foundation
import SluiceCore
import SluiceHTTP

/// Ollama's native `/api/embed`, always with `truncate: false`: Ollama's default silently truncates an
/// input over the model's context, which would embed text that is not the chunk.
struct OllamaDialect: EmbeddingDialect {
    func request(for texts: [String], configuration: RemoteEmbedderConfiguration) throws -> HTTPRequest {
        var body = JSONRequestBody()
        body.append("model", .string(configuration.model))
        body.append("input", .strings(texts))
        body.append("truncate", .bool(false))
        if let dimensions = configuration.requestedDimensions { body.append("dimensions", .int(dimensions)) }
        var headers: [(String, String)] = []
        if let key = configuration.apiKey { headers.append(("Authorization", "Bearer \(key)")) }
        return .postJSON(joinURL(configuration.baseURL, "api/embed"), body: body.body, headers: headers)
    }

    func vectors(from response: HTTPResponse, count: Int) throws -> [[Float]] {
        guard let json = try? JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any],
            let embeddings = json["embeddings"] as? [[NSNumber]], embeddings.count == count
        else {
            throw SluiceError(.embeddingFailed, "Ollama's answer has no 'embeddings' list of \(count) vectors")
        }
        return embeddings.map { $0.map(\.floatValue) }
    }
}
