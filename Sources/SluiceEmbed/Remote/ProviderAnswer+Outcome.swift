import SluiceCore
import SluiceHTTP

extension ProviderAnswer {
    /// The request loop's outcome for this answer, one rule for every model Sluice calls (the embedders,
    /// the reranker, the image captioner): a 2xx finishes the call, a rate limit and a transient failure
    /// are retried with the answer's headers (so `Retry-After` is read in one place), a refusal to go on
    /// and a request the provider never takes stop it. Only what differs is the caller's: what a refusal
    /// for size means (a batch splits, an image cannot) and the words of each error.
    /// - Parameters:
    ///   - response: The answer this value classifies.
    ///   - answer: The call's value when the answer is a 2xx.
    ///   - tooLarge: The outcome of a refusal for size, given the provider's reason.
    ///   - refused: The error of a refusal to go on (credentials, quota); coded
    ///     ``SluiceError/Code/providerRefused``, it refuses every later call at once.
    ///   - invalid: The error of a request the provider will never accept.
    ///   - rateLimited: Called once for a rate-limited answer, to count it.
    /// - Returns: What ``RemoteCall`` does next.
    func outcome<Value: Sendable>(
        of response: HTTPResponse,
        answer: @autoclosure () -> Value,
        tooLarge: (String) -> RemoteCallOutcome<Value>,
        refused: (String) -> any Error,
        invalid: (String) -> any Error,
        rateLimited: () -> Void
    ) -> RemoteCallOutcome<Value> {
        switch self {
        case .success:
            return .finished(answer(), headers: response.headers)
        case .tooLarge(let reason):
            return tooLarge(reason)
        case .rateLimited(let reason):
            rateLimited()
            return .retry(.rateLimited, reason: reason, headers: response.headers)
        case .refused(let reason):
            return .stop(refused(reason), headers: response.headers)
        case .transient(let reason):
            return .retry(.transient, reason: reason, headers: response.headers)
        case .invalid(let reason):
            return .stop(invalid(reason), headers: response.headers)
        }
    }
}
