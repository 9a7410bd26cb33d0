import Foundation

/// An answer's events gathered into the one JSON object that `sluice ask --json` prints and `POST /v1/ask`
/// answers (and sends last as its `done` event): `answer` (null when nothing relevant was retrieved, or
/// when the answer cited none of its passages: "not in the sources"), `reason`, `sources` (with `search
/// --json`'s field names, in the order the answer used them), `check` (``AnswerCheck``: `cited`,
/// `unknown_citations`, `unsupported_quotes`), `withheld_answer`, `model`, `usage`, `finish_reason`, `rerank`.
public struct AnswerTranscript: Sendable {
    public private(set) var answer = ""
    public private(set) var sources: [AnswerSource] = []
    public private(set) var summary: AnswerSummary?
    /// Why the model was not asked (nothing relevant retrieved).
    public private(set) var reason: String?
    /// What the answer's citations hold up to, once it is complete.
    public private(set) var check: AnswerCheck?

    /// Why there is no answer when the model's cited none of its passages.
    public static let notInTheSources =
        "not in the sources: the model's answer cites none of the passages it was given (answer.require_citations)"

    public init() {}

    public mutating func take(_ event: AnswerEvent) {
        switch event {
        case .text(let text): answer += text
        case .checked(let check): self.check = check
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
        let withheld = check?.withheldAnswer
        let why: String? = reason ?? (withheld == nil ? nil : Self.notInTheSources)
        return [
            "answer": reason == nil && withheld == nil ? answer : NSNull(),
            "reason": why ?? NSNull(),
            "sources": sources.map(Self.jsonObject),
            "check": check.map(Self.jsonObject) ?? NSNull(),
            "withheld_answer": withheld ?? NSNull(),
            "model": summary?.model ?? NSNull(),
            "usage": usage,
            "finish_reason": summary?.finishReason ?? NSNull(),
            "rerank": summary?.rerank.map(Self.jsonObject) ?? NSNull(),
        ]
    }

    /// The check's JSON object: `cited`, `unknown_citations`, `unsupported_quotes` (`text`, `cited`).
    public static func jsonObject(_ check: AnswerCheck) -> [String: Any] {
        [
            "cited": check.cited, "unknown_citations": check.unknownCitations,
            "unsupported_quotes": check.unsupportedQuotes.map { ["text": $0.text, "cited": $0.cited] },
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
