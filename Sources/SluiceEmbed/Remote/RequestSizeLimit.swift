/// The request size a provider has shown it refuses, learnt from its "too large" answers and kept for the
/// embedder's life (the run), so that later batches are cut before they are sent instead of each being
/// refused once more.
///
/// Pure: ``RemoteEmbedder`` owns one behind a lock.
struct RequestSizeLimit: Sendable, Equatable {
    /// The most inputs and tokens (by our counter) one request may carry.
    private(set) var maxInputs = Int.max
    private(set) var maxTokens = Int.max

    /// Whether a request of `inputs` texts and `tokens` tokens is within what was learnt.
    func admits(inputs: Int, tokens: Int) -> Bool {
        inputs <= maxInputs && tokens <= maxTokens
    }

    /// A request of `inputs` texts (more than one) and `tokens` tokens was refused as too large.
    ///
    /// - `providerLimit`: the provider's own figures when it gave them (OpenAI's 429 "Request too large
    ///   … (TPM): Limit L, Requested N"). The token limit is then L in our units: the provider counts the
    ///   same texts differently, so L is scaled by `tokens`/N; and it is below `tokens` whatever the
    ///   figures say, so that every refusal makes progress.
    /// - otherwise (400 "too many inputs", 413): the cause is not known; the halves the batch is split
    ///   into are taken as the most inputs a request may carry.
    mutating func refused(inputs: Int, tokens: Int, providerLimit: (limit: Int, requested: Int)?) {
        if let providerLimit {
            let scaled = Double(providerLimit.limit) * Double(tokens) / Double(providerLimit.requested)
            let limit = scaled < Double(tokens) ? Int(scaled.rounded(.down)) : tokens - 1
            maxTokens = min(maxTokens, max(1, limit))
        } else {
            maxInputs = min(maxInputs, max(1, inputs / 2))
        }
    }
}
