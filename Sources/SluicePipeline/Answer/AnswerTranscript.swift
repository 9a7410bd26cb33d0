import Foundation

/// An answer's events gathered into the one JSON object that `sluice ask --json` prints and `POST /v1/ask`
/// answers (and sends last as its `done` event): `answer` (null when nothing relevant was retrieved),
/// `reason`, `sources` (with `search --json`'s field names), `model`, `usage`, `finish_reason`, `rerank`.
public struct AnswerTranscript: Sendable {
    public private(set) var answer = ""
    public private(set) var sources: [AnswerSource] = []
    public private(set) var summary: AnswerSummary?
    /// Why the model was not asked (nothing relevant retrieved).
    public private(set) var reason: String?

    public init() {}

    public mutating func take(_ event: AnswerEvent) {
        switch event {
        case .text(let text): answer += text
        case .sources(let list): sources = list
        case .finished(let finished): summary = finished
        case .nothingRelevant(let why): reason = why
        }
    }

    /// The JSON object (for `JSONSerialization`).
    public var jsonObject: [String: Any] {
        var usage: Any = NSNull()
        if let counts = summary?.usage {
            usage = [
                "prompt_tokens": counts.promptTokens, "completion_tokens": counts.completionTokens,
                "total_tokens": counts.totalTokens,
            ]
        }
        return [
            "answer": reason == nil ? answer : NSNull(),
            "reason": reason ?? NSNull(),
            "sources": sources.map(Self.jsonObject),
            "model": summary?.model ?? NSNull(),
            "usage": usage,
            "finish_reason": summary?.finishReason ?? NSNull(),
            "rerank": summary?.rerank.map(Self.jsonObject) ?? NSNull(),
        ]
    }

    /// `{model, applied, reason}`, as `search --json` and `POST /v1/search` give it.
    public static func jsonObject(_ status: RerankStatus) -> [String: Any] {
        ["model": status.model, "applied": status.applied, "reason": status.reason ?? NSNull()]
    }

    /// One source with `search --json`'s field names, and `number`, `truncated`, `cited`.
    public static func jsonObject(_ source: AnswerSource) -> [String: Any] {
        [
            "number": source.number, "id": source.id, "document_key": source.documentKey,
            "page": source.page ?? NSNull(), "headings": source.headings, "score": source.score,
            "rerank_score": source.rerankScore ?? NSNull(), "text": source.text, "truncated": source.truncated,
            "cited": source.cited,
        ]
    }
}
