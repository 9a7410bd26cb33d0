/// What ``Answerer/answer(_:k:filter:mode:)`` reports, in order: text as the model writes it, then the check
/// of its citations, then the sources its `[n]` markers refer to, then the summary. When nothing relevant
/// was retrieved the only event is ``nothingRelevant(_:)``: the model was not called.
public enum AnswerEvent: Sendable, Hashable {
    /// A piece of the answer's text.
    case text(String)
    /// What the answer's citations hold up to (``AnswerCheck``), once the text is complete. When the answer
    /// cites no passage and `answer.require_citations` holds, no text came before it: the answer is "not in
    /// the sources" and ``AnswerCheck/withheldAnswer`` has the model's text.
    case checked(AnswerCheck)
    /// The numbered passages the prompt held, in the order the answer used them (``AnswerCheck/ordered(_:)``:
    /// the cited ones first); `[n]` is the source whose ``AnswerSource/number`` is n.
    case sources([AnswerSource])
    /// The model's name and token usage, when the server reported them; the last event.
    case finished(AnswerSummary)
    /// No hit, or no hit scoring at least `answer.min_score`: why, in a sentence.
    case nothingRelevant(String)
}
