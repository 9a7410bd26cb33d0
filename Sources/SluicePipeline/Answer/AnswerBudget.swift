import SluiceCore

/// What one streamed answer may take: tokens, bytes and time. A chat server is a dependency, not a
/// trusted party: one that streams without end, or far more than `answer.max_answer_tokens` allows, is
/// stopped and reported (``SluiceError/Code/dependencyUnavailable``: exit 6, HTTP 503) instead of being
/// read until memory or patience runs out (issue 37).
///
/// A pure value: ``ChatClient`` feeds it the text as it arrives and the clock's readings.
struct AnswerBudget: Sendable {
    /// The most tokens (counted with the answer's token counter) the text may take: twice
    /// `answer.max_answer_tokens` plus 64, since the model counts with its own tokenizer, which may
    /// split the same text into fewer tokens than cl100k_base does.
    let maxTokens: Int
    /// The most bytes the response body may have (events, their JSON and keep-alives included): 1 MiB
    /// plus 1 KiB per answer token, several times what an OpenAI-compatible stream sends per token.
    let maxBytes: Int
    /// When the answer must be complete: `answer.timeout_seconds` after the request was sent, whether the
    /// time went to the network or to reading what had arrived.
    let deadline: ContinuousClock.Instant
    /// The limit behind ``deadline``, for messages.
    let timeout: Duration
    private(set) var tokens = 0

    init(answerTokens: Int, timeout: Duration, start: ContinuousClock.Instant) {
        maxTokens = Self.maxTokens(answerTokens: answerTokens)
        maxBytes = Self.maxBytes(answerTokens: answerTokens)
        self.timeout = timeout
        deadline = start + timeout
    }

    static func maxTokens(answerTokens: Int) -> Int { 2 * answerTokens + 64 }

    static func maxBytes(answerTokens: Int) -> Int { (1 << 20) + 1024 * answerTokens }

    /// Why the answer must stop, if it must.
    enum Overrun: Equatable, Sendable {
        case tokens(Int)
        case time

        /// The message for the error that ends the answer.
        func message(_ budget: AnswerBudget, answerTokens: Int) -> String {
            switch self {
            case .tokens(let count):
                return
                    "the answer model wrote more than \(budget.maxTokens) tokens (\(count) counted; answer.max_answer_tokens is \(answerTokens)): it does not honour max_tokens"
            case .time:
                return "the answer took longer than answer.timeout_seconds (\(budget.timeout.seconds) s)"
            }
        }
    }

    /// Counts `text` (with `counter`) against the budget.
    /// - Returns: The overrun, once the text is over ``maxTokens``.
    mutating func take(_ text: String, counter: any TokenCounter) -> Overrun? {
        tokens += counter.count(text)
        return tokens > maxTokens ? .tokens(tokens) : nil
    }

    /// Whether the time is up at `now`.
    func check(at now: ContinuousClock.Instant) -> Overrun? {
        now > deadline ? .time : nil
    }
}
