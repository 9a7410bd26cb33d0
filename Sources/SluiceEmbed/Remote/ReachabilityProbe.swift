import SluiceCore
import SluiceHTTP

/// Whether an endpoint answers at all, for the checks a run makes before it takes any document (the remote
/// embedders, the image captioner): a `GET` of `url`, where any HTTP status (a 404, a 401) counts as
/// reachable. Connection refused or reset, DNS failures and timeouts are tried three times, a short pause
/// apart, then reported as ``SluiceError/Code/dependencyUnavailable`` with `what` and the redacted URL.
/// Nothing is requested of the API and nothing is counted against a rate budget.
///
/// - Parameter scrub: removes the API key from a transport message.
func probeReachable(
    _ url: String,
    what: String,
    client: HTTPClient,
    timeout: Duration,
    scrub: (String) -> String
) async throws {
    let request = HTTPRequest(url: url, timeout: timeout)
    var attempt = 0
    while true {
        attempt += 1
        do {
            _ = try await client.send(request)
            return
        } catch let error as SluiceError where error.isTransient {
            guard attempt < 3 else {
                throw SluiceError(
                    .dependencyUnavailable,
                    "\(what) at \(redactedURL(url)) cannot be reached: \(scrub(error.message))",
                    cause: error
                )
            }
            try await ShutdownSignal.pause(for: .milliseconds(250 * attempt))
        }
    }
}
