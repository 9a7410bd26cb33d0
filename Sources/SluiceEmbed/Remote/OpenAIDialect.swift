import Foundation
import SluiceCore
import SluiceHTTP

/// OpenAI's `/v1/embeddings` (and every server that copies it: vLLM, LM Studio, TEI's and Ollama's
/// `/v1`), and Azure OpenAI's deployment endpoint, which differs in URL and key header only.
struct OpenAIDialect: EmbeddingDialect {
    /// Azure: `<deployment URL>/embeddings?api-version=…` with an `api-key` header, no `model` field.
    var azure: Bool

    func request(for texts: [String], configuration: RemoteEmbedderConfiguration) throws -> HTTPRequest {
        var body = JSONRequestBody()
        body.append("input", .strings(texts))
        body.append("encoding_format", .string(configuration.encodingFormat))
        if !azure { body.append("model", .string(configuration.model)) }
        if let dimensions = configuration.requestedDimensions { body.append("dimensions", .int(dimensions)) }
        var headers: [(String, String)] = []
        let url: String
        if azure {
            url = joinURL(configuration.baseURL, "embeddings") + "?api-version=\(configuration.apiVersion)"
            if let key = configuration.apiKey { headers.append(("api-key", key)) }
        } else {
            url = joinURL(configuration.baseURL, "embeddings")
            if let key = configuration.apiKey { headers.append(("Authorization", "Bearer \(key)")) }
        }
        return .postJSON(url, body: body.body, headers: headers)
    }

    /// `data[].embedding` placed by `data[].index` (the order of `data` is not promised); base64 bodies
    /// are little-endian float32. Read by ``OpenAIEmbeddingsScan`` where it can, else (and for every
    /// refusal) by `JSONSerialization`.
    func vectors(from response: HTTPResponse, count: Int) throws -> [[Float]] {
        if let vectors = OpenAIEmbeddingsScan.vectors(in: response.body, count: count) { return vectors }
        return try vectorsFromJSONObject(response, count: count)
    }

    /// The answer read through `JSONSerialization`: every answer the scan leaves, and the refusals' wording.
    func vectorsFromJSONObject(_ response: HTTPResponse, count: Int) throws -> [[Float]] {
        guard let json = try? JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any],
            let data = json["data"] as? [[String: Any]]
        else {
            throw SluiceError(.embeddingFailed, "the provider's answer has no 'data' list")
        }
        var vectors = [[Float]?](repeating: nil, count: count)
        for item in data {
            guard let index = item["index"] as? Int, vectors.indices.contains(index), vectors[index] == nil else {
                throw SluiceError(
                    .embeddingFailed,
                    "the provider's answer has a missing, repeated or out-of-range index"
                )
            }
            if let text = item["embedding"] as? String {
                vectors[index] = try Self.decodeBase64Floats(text)
            } else if let numbers = item["embedding"] as? [NSNumber] {
                vectors[index] = numbers.map { $0.floatValue }
            } else {
                throw SluiceError(
                    .embeddingFailed,
                    "the provider's answer has an embedding that is neither base64 nor numbers"
                )
            }
        }
        guard vectors.allSatisfy({ $0 != nil }) else {
            throw SluiceError(.embeddingFailed, "the provider answered \(data.count) embeddings for \(count) inputs")
        }
        return vectors.map { $0! }
    }

    /// Base64 of little-endian IEEE-754 float32 values.
    static func decodeBase64Floats(_ text: String) throws -> [Float] {
        guard let data = Data(base64Encoded: text), data.count % 4 == 0 else {
            throw SluiceError(.embeddingFailed, "a base64 embedding does not decode to float32 values")
        }
        return data.withUnsafeBytes { raw in
            (0..<(data.count / 4)).map {
                Float(bitPattern: UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: $0 * 4, as: UInt32.self)))
            }
        }
    }
}
