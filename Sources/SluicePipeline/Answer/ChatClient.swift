import Foundation
import SluiceCore
import SluiceEmbed
import SluiceHTTP

/// An OpenAI-compatible chat completions endpoint (OpenAI, Azure OpenAI, Ollama, vLLM, llama.cpp's server),
/// asked for a streamed answer (`"stream": true`, server-sent events).
///
/// Failures before the first token are retried under the one ``RetryPolicy``, up to `answer.max_retries`
/// (429s counted with the others): 429, 408/409/5xx, resets and timeouts, an error event or a stream that
/// ends before any text; a server's `Retry-After` replaces the backoff (capped at
/// `answer.max_retry_after_seconds`). After the first token nothing is retried
/// (the words already shown cannot be taken back): a failure ends the answer with
/// ``SluiceError/Code/dependencyUnavailable``. 401, 403 and an exhausted quota are
/// ``SluiceError/Code/providerRefused``; other 4xx (a model the server does not have, a prompt over its
/// context) are ``SluiceError/Code/configuration``. Retries spent on an unreachable or failing server are
/// ``SluiceError/Code/dependencyUnavailable``. The API key travels in a header only and is scrubbed from
/// every message.
///
/// What comes back is bounded (``AnswerBudget``): the text's tokens, the body's bytes, and the time of the
/// whole answer, reading included. A server that goes past one — writes far more than `max_tokens`, sends
/// a huge event, streams without end, answers in a content type that is not an event stream — is a
/// misbehaving dependency: ``SluiceError/Code/dependencyUnavailable``, not retried. The body is read a
/// chunk at a time, and the reading task yields after each chunk, so that a fast stream cannot hold a
/// thread of the cooperative pool (a server's `/health` answers while answers stream).
final class ChatClient: Sendable {
    let configuration: PipelineConfiguration.Answer
    private let apiKey: String?
    private let url: String
    private let client: HTTPClient
    /// The one request loop: `answer.max_retries` retries (429s counted with them),
    /// `answer.max_retry_after_seconds`; no gate.
    private let call: RemoteCall<OpenGate, ContinuousClock>
    /// Counts the answer's tokens against ``AnswerBudget/maxTokens``.
    private let tokenCounter: any TokenCounter

    /// What one completed answer reports besides its text.
    struct Summary: Sendable, Hashable {
        var model: String?
        var usage: AnswerUsage?
        /// `stop`, `length` (`max_tokens` reached), … when the server said.
        var finishReason: String?
    }

    /// - Parameter tokenCounter: Counts the answer's tokens; nil: cl100k_base.
    /// - Throws: ``SluiceError/Code/configuration`` for Azure without `base_url`, or an `api_key_env` naming
    ///   an unset variable.
    init(
        configuration: PipelineConfiguration.Answer,
        environment: [String: String] = ProcessInfo.processInfo.environment,
        client: HTTPClient? = nil,
        backoff: Backoff = Backoff(base: .milliseconds(500), cap: .seconds(8)),
        tokenCounter: (any TokenCounter)? = nil
    ) throws {
        guard let base = configuration.effectiveBaseURL else {
            throw SluiceError(.configuration, "answer.base_url: required for \(configuration.provider.rawValue)")
        }
        self.configuration = configuration
        self.apiKey = try EnvironmentSecret.value(
            of: configuration.apiKeyEnv,
            key: "answer.api_key_env",
            need: .ifNamed,
            environment: environment
        )
        var url = joinURL(base, "chat/completions")
        if configuration.provider.sendsAPIVersion { url += "?api-version=\(configuration.apiVersion)" }
        self.url = url
        var http = HTTPClient.Configuration()
        http.timeout = .seconds(configuration.timeoutSeconds)
        self.client = client ?? HTTPClient(configuration: http)
        self.call = RemoteCall(
            policy: RetryPolicy(
                maxRetries: configuration.maxRetries,
                backoff: backoff,
                maxRetryAfter: .milliseconds(Int64(configuration.maxRetryAfterSeconds * 1000))
            )
        )
        self.tokenCounter = try tokenCounter ?? BPETokenizer.named("cl100k_base")
    }

    /// The retries (``RetryPolicy``) of every answer.
    var policy: RetryPolicy { call.policy }

    /// The timeout of one answer (`answer.timeout_seconds`).
    var timeout: Duration { .milliseconds(Int64(configuration.timeoutSeconds * 1000)) }

    /// The request for `prompt`: the key in a header (`Authorization: Bearer`, Azure: `api-key`).
    func request(for prompt: AnswerPrompt) throws -> HTTPRequest {
        var body: [String: Any] = [
            "messages": [
                ["role": "system", "content": prompt.instructions],
                ["role": "user", "content": prompt.user],
            ],
            "stream": true,
            "max_tokens": configuration.maxAnswerTokens,
            "temperature": configuration.temperature,
        ]
        if let model = configuration.effectiveModel { body["model"] = model }
        // OpenAI sends token usage in a last event only when asked; Azure and Ollama may refuse the field.
        if configuration.provider.asksForStreamUsage { body["stream_options"] = ["include_usage": true] }
        var headers: [(String, String)] = [("Accept", "text/event-stream")]
        if let apiKey {
            headers.append(
                configuration.provider.sendsKeyInAPIKeyHeader
                    ? ("api-key", apiKey) : ("Authorization", "Bearer \(apiKey)")
            )
        }
        let data = try JSONSerialization.data(withJSONObject: body, options: [.sortedKeys])
        var request = HTTPRequest.postJSON(url, body: Array(data), headers: headers, timeout: timeout)
        request.maxResponseBytes = AnswerBudget.maxBytes(answerTokens: configuration.maxAnswerTokens)
        return request
    }

    /// Streams the answer to `prompt`, calling `onText` with each piece of text as it arrives.
    ///
    /// - Returns: The model's name and the token usage, when the server reported them.
    /// - Throws: ``SluiceError`` as described on the type; `CancellationError` when the task is cancelled.
    func complete(_ prompt: AnswerPrompt, onText: (String) async throws -> Void) async throws -> Summary {
        let request = try request(for: prompt)
        return try await call.run(
            gaveUp: {
                SluiceError(
                    .dependencyUnavailable,
                    "the answer model at \(redactedURL(url)) failed \($0.attempts) times: \(scrub($0.reason))"
                )
            },
            attempt: {
                try await attempt(request, onText: onText)
            }
        )
    }

    /// One attempt's outcome: answered, or failed before the first token (worth another attempt, as the
    /// ``RetryPolicy`` says).
    private typealias Outcome = RemoteCallOutcome<Summary>

    /// One request: its answer streamed to `onText`, or why it is worth retrying.
    private func attempt(_ request: HTTPRequest, onText: (String) async throws -> Void) async throws -> Outcome {
        var budget = AnswerBudget(
            answerTokens: configuration.maxAnswerTokens,
            timeout: timeout,
            start: ContinuousClock.now
        )
        let response: HTTPStreamingResponse
        do {
            response = try await client.stream(request)
        } catch let error as SluiceError where error.isTransient {
            return .retry(.transient, reason: error.message)
        }
        guard (200..<300).contains(response.status) else {
            let whole: HTTPResponse
            do {
                whole = try await response.collect()
            } catch let error as SluiceError where error.isTransient {
                return .retry(.transient, reason: error.message)
            } catch let error as SluiceError where error.code == .tooLarge {
                throw misbehaving("its error answer (HTTP \(response.status)) is over \(budget.maxBytes) bytes")
            }
            return try judge(whole)
        }
        let contentType = response.headers["content-type"]?.lowercased()
        if contentType?.contains("application/json") == true {
            return try await unstreamed(response, budget: budget, onText: onText)
        }
        // No content type is taken for an event stream (some servers send none); any other is not one.
        if let contentType, !contentType.contains("text/event-stream") {
            throw misbehaving(
                "it answered HTTP \(response.status) in \(contentType.prefix(80)), not text/event-stream (check answer.base_url)"
            )
        }
        var reader = ChatStreamReader()
        func take(_ items: [ChatStreamItem]) async throws {
            for item in items {
                guard let text = try reader.take(item) else { continue }
                if let overrun = budget.take(text, counter: tokenCounter) {
                    throw misbehaving(overrun.message(budget, answerTokens: configuration.maxAnswerTokens))
                }
                try await onText(text)
            }
        }
        do {
            for try await chunk in response.body {
                try await take(reader.items(from: chunk))
                if reader.isDone { break }
                if let overrun = budget.check(at: .now) {
                    guard reader.started else {
                        return .retry(.transient, reason: overrun.message(budget, answerTokens: 0))
                    }
                    throw misbehaving(overrun.message(budget, answerTokens: configuration.maxAnswerTokens))
                }
                // A body already received is read without suspending: let other tasks have the thread.
                await Task.yield()
            }
            if !reader.isDone { try await take(reader.finish()) }
        } catch let error as SluiceError where error.isTransient && !reader.started {
            return .retry(.transient, reason: error.message)
        } catch let error as ChatStreamReader.StreamError where !reader.started {
            return .retry(.transient, reason: error.message)
        } catch let error as ChatStreamReader.StreamError {
            throw SluiceError(.dependencyUnavailable, "the answer was cut short: \(scrub(error.message))")
        } catch let error as SluiceError where error.isTransient {
            throw SluiceError(
                .dependencyUnavailable,
                "the answer was cut short: \(scrub(error.message))",
                cause: error
            )
        } catch let error as SluiceError where error.code == .tooLarge {
            throw misbehaving("it streamed more than \(budget.maxBytes) bytes for one answer")
        }
        guard reader.started else { return .retry(.transient, reason: "the stream ended without any text") }
        guard reader.isComplete else {
            throw SluiceError(
                .dependencyUnavailable,
                "the answer was cut short: the stream ended before the model finished"
            )
        }
        return .finished(Summary(model: reader.model, usage: reader.usage, finishReason: reader.finishReason))
    }

    /// The error for a server that went past what an answer may take, or sent what is not an answer:
    /// a misbehaving dependency (exit 6, HTTP 503), not retried.
    private func misbehaving(_ what: String) -> SluiceError {
        SluiceError(.dependencyUnavailable, "the answer model at \(redactedURL(url)) misbehaved: \(scrub(what))")
    }

    /// A server that ignored `"stream": true` and answered with one JSON object.
    private func unstreamed(
        _ response: HTTPStreamingResponse,
        budget: AnswerBudget,
        onText: (String) async throws -> Void
    ) async throws
        -> Outcome
    {
        var budget = budget
        let whole: HTTPResponse
        do {
            whole = try await response.collect()
        } catch let error as SluiceError where error.isTransient {
            return .retry(.transient, reason: error.message)
        } catch let error as SluiceError where error.code == .tooLarge {
            throw misbehaving("its JSON answer is over \(budget.maxBytes) bytes")
        }
        let object = try? JSONSerialization.jsonObject(with: Data(whole.body)) as? [String: Any]
        let choice = (object?["choices"] as? [[String: Any]])?.first
        guard let text = (choice?["message"] as? [String: Any])?["content"] as? String, !text.isEmpty else {
            return .retry(.transient, reason: "an answer without text: \(providerMessage(whole))")
        }
        if let overrun = budget.take(text, counter: tokenCounter) {
            throw misbehaving(overrun.message(budget, answerTokens: configuration.maxAnswerTokens))
        }
        try await onText(text)
        return .finished(
            Summary(
                model: object?["model"] as? String,
                usage: (object?["usage"] as? [String: Any]).flatMap { AnswerUsage($0) },
                finishReason: choice?["finish_reason"] as? String
            )
        )
    }

    /// What a non-2xx answer means: retry, or stop with the error the exit code comes from.
    private func judge(_ response: HTTPResponse) throws -> Outcome {
        switch ProviderAnswer(response, batchSize: 1) {
        case .success:
            return .retry(.transient, reason: "HTTP \(response.status)")
        case .rateLimited(let reason):
            return .retry(.rateLimited, reason: reason, headers: response.headers)
        case .transient(let reason):
            return .retry(.transient, reason: reason, headers: response.headers)
        case .refused(let reason):
            throw SluiceError(.providerRefused, "the answer model refused: \(scrub(reason))")
        case .tooLarge(let reason), .invalid(let reason):
            throw SluiceError(
                .configuration,
                "the answer model at \(redactedURL(url)) refused the request (check answer.model, answer.base_url, answer.max_context_tokens): \(scrub(reason))"
            )
        }
    }

    func scrub(_ message: String) -> String { EnvironmentSecret.redacting(apiKey, in: message) }
}
