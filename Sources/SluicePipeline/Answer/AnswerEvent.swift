/// What ``Answerer/answer(_:)`` reports, in order: text as the model writes it, then the sources its `[n]`
/// markers refer to, then the summary. When nothing relevant was retrieved the only event is
/// ``nothingRelevant(_:)``: the model was not called.
public enum AnswerEvent: Sendable, Hashable {
    /// A piece of the answer's text.
    case text(String)
    /// The numbered passages the prompt held (`[n]` is `sources[n - 1]`), after the last text.
    case sources([AnswerSource])
    /// The model's name and token usage, when the server reported them; the last event.
    case finished(AnswerSummary)
    /// No hit, or no hit scoring at least `answer.min_score`: why, in a sentence.
    case nothingRelevant(String)
}

/// What the server reported about an answer besides its text.
public struct AnswerSummary: Sendable, Hashable {
    /// The model that answered (the server's name for it, else the configured one).
    public var model: String?
    public var usage: AnswerUsage?
    /// Why the model stopped, when the server said: `stop`, or `length` when the answer reached
    /// `answer.max_answer_tokens` (it is then cut).
    public var finishReason: String?

    public init(model: String?, usage: AnswerUsage?, finishReason: String? = nil) {
        self.model = model
        self.usage = usage
        self.finishReason = finishReason
    }
}
