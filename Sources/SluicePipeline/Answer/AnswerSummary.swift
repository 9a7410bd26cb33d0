/// What the server reported about an answer besides its text.
public struct AnswerSummary: Sendable, Hashable {
    /// The model that answered (the server's name for it, else the configured one).
    public var model: String?
    public var usage: AnswerUsage?
    /// Why the model stopped, when the server said: `stop`, or `length` when the answer reached
    /// `answer.max_answer_tokens` (it is then cut).
    public var finishReason: String?
    /// Whether a reranker (`search.rerank`) ordered the passages; nil: the pipeline has none.
    public var rerank: RerankStatus? = nil

    public init(model: String?, usage: AnswerUsage?, finishReason: String? = nil) {
        self.model = model
        self.usage = usage
        self.finishReason = finishReason
    }
}
