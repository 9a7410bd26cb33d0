/// What ``Answerer/answer(_:k:filter:mode:)`` reports, in order: text as the model writes it, then the
/// sources its `[n]` markers refer to, then the summary. When nothing relevant was retrieved the only event is
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
