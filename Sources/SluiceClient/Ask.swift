import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `POST /v1/ask`'s body (docs/openapi.json, `AskRequest`).
public struct AskRequest: Sendable, Hashable, Codable {
    public var question: String
    /// Passages to retrieve; nil: the server's `answer.k`.
    public var k: Int?
    /// The JSON filter form, as for search.
    public var filter: JSONValue?
    /// `vector`, `keyword` or `hybrid`; nil: the server's default for its store.
    public var mode: String?
    /// false: the server's reranker (`search.rerank`) is skipped for this question; nil: it is used.
    public var rerank: Bool?
    /// How hybrid merges its rankings: `score` or `rrf`; nil: the server's `search.fusion`.
    public var fusion: String?

    public init(
        question: String,
        k: Int? = nil,
        filter: JSONValue? = nil,
        mode: String? = nil,
        rerank: Bool? = nil,
        fusion: String? = nil
    ) {
        self.question = question
        self.k = k
        self.filter = filter
        self.mode = mode
        self.rerank = rerank
        self.fusion = fusion
    }
}

/// One numbered passage of an answer (`AskSource`): what the answer's `[n]` markers refer to.
public struct AskSource: Sendable, Hashable, Codable {
    public var number: Int
    public var id: String
    public var documentKey: String
    public var page: Int?
    public var headings: [String]
    /// The first stage's score.
    public var score: Double
    /// The reranker's score when it ordered the passages.
    public var rerankScore: Double?
    public var text: String
    public var truncated: Bool
    public var cited: Bool

    enum CodingKeys: String, CodingKey {
        case number, id, page, headings, score, text, truncated, cited
        case documentKey = "document_key"
        case rerankScore = "rerank_score"
    }
}

/// What an answer's citations hold up to (`AskCheck`), checked against the passages it was given.
public struct AskCheck: Sendable, Hashable, Codable {
    /// The passages the answer cites, in the order it first cites them.
    public var cited: [Int]
    /// Numbers in the answer's `[n]` markers that name no passage: made up.
    public var unknownCitations: [Int]
    /// Quotations (three words or more in double quotes) in none of the passages they cite.
    public var unsupportedQuotes: [Quote]

    public struct Quote: Sendable, Hashable, Codable {
        public var text: String
        /// The passages the answer cites for it (empty: none; no passage holds it).
        public var cited: [Int]
    }

    enum CodingKeys: String, CodingKey {
        case cited
        case unknownCitations = "unknown_citations"
        case unsupportedQuotes = "unsupported_quotes"
    }
}

/// The answer (`AskResponse`), as `sluice ask --json` prints it.
public struct AskResponse: Sendable, Hashable, Codable {
    /// Nil when nothing relevant was retrieved, or when the model's answer cited none of its passages ("not
    /// in the sources"); ``reason`` says which.
    public var answer: String?
    public var reason: String?
    /// The passages, in the order the answer used them (the cited ones first).
    public var sources: [AskSource]
    /// Nil when the model was not asked.
    public var check: AskCheck?
    /// The model's text when it cited no passage and the server's `answer.require_citations` held it back.
    public var withheldAnswer: String?
    public var model: String?
    public var usage: Usage?
    /// `stop`, or `length` when the answer reached the server's `answer.max_answer_tokens`.
    public var finishReason: String?
    /// Whether the server's reranker ordered the passages; nil: it has none, or the request skipped it.
    public var rerank: RerankInfo?
    /// The records the question's searches skipped because the store could not read them; nil when the server
    /// did not say (a restricted caller, an older server). A streamed answer has it in its ``AskEvent/done(_:)``.
    public var skipped: [SkippedRecord]?

    public struct Usage: Sendable, Hashable, Codable {
        public var promptTokens: Int
        public var completionTokens: Int
        public var totalTokens: Int

        enum CodingKeys: String, CodingKey {
            case promptTokens = "prompt_tokens"
            case completionTokens = "completion_tokens"
            case totalTokens = "total_tokens"
        }
    }

    enum CodingKeys: String, CodingKey {
        case answer, reason, sources, check, model, usage, rerank, skipped
        case withheldAnswer = "withheld_answer"
        case finishReason = "finish_reason"
    }
}

/// What ``SluiceClient/askStream(_:)`` yields: the answer's text as the model writes it (none when it cites
/// no passage), the check of its citations, the sources, then the whole answer.
public enum AskEvent: Sendable, Hashable {
    case text(String)
    case check(AskCheck)
    case sources([AskSource])
    case done(AskResponse)
}

extension SluiceClient {
    /// `POST /v1/ask`: the whole answer once the model is done.
    public func ask(_ ask: AskRequest) async throws -> AskResponse {
        try await send("POST", "v1/ask", body: ask)
    }

    /// `POST /v1/ask` as server-sent events. On Apple platforms the events arrive as the model writes;
    /// on Linux (FoundationNetworking has no byte stream) they arrive when the answer is complete.
    public func askStream(_ ask: AskRequest) -> AsyncThrowingStream<AskEvent, any Error> {
        AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    var body =
                        try JSONSerialization.jsonObject(with: JSONEncoder().encode(ask)) as? [String: Any] ?? [:]
                    body["stream"] = true
                    var request = request("POST", "v1/ask", body: try JSONSerialization.data(withJSONObject: body))
                    request.setValue("text/event-stream", forHTTPHeaderField: "Accept")
                    var parser = ServerSentEventParser()
                    for try await line in try await lines(request) {
                        guard let event = parser.feed(line: line) else { continue }
                        if let value = try Self.askEvent(event) { continuation.yield(value) }
                    }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    static func askEvent(_ event: ServerSentEvent) throws -> AskEvent? {
        let data = Data(event.data.utf8)
        switch event.event {
        case "text":
            struct Text: Decodable { var text: String }
            return .text(try JSONDecoder().decode(Text.self, from: data).text)
        case "check": return .check(try JSONDecoder().decode(AskCheck.self, from: data))
        case "sources":
            struct Sources: Decodable { var sources: [AskSource] }
            return .sources(try JSONDecoder().decode(Sources.self, from: data).sources)
        case "done": return .done(try JSONDecoder().decode(AskResponse.self, from: data))
        case "error": throw SluiceClientError(status: 200, body: data)
        default: return nil
        }
    }

    /// The answer's lines, as they arrive where the platform can stream them.
    private func lines(_ request: URLRequest) async throws -> AsyncThrowingStream<String, any Error> {
        #if canImport(Darwin)
        let (bytes, response) = try await session.bytes(for: request)
        if let http = response as? HTTPURLResponse, http.statusCode != 200 {
            var data = Data()
            for try await byte in bytes { data.append(byte) }
            throw SluiceClientError(http, body: data)
        }
        return AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    for try await line in bytes.lines { continuation.yield(line) }
                    continuation.yield("")
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
        #else
        let (data, _) = try await exchange(request, accepting: [200])
        let text = String(decoding: data, as: UTF8.self)
        return AsyncThrowingStream { continuation in
            for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
                continuation.yield(String(line.hasSuffix("\r") ? line.dropLast() : line))
            }
            continuation.finish()
        }
        #endif
    }
}
