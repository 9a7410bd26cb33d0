import Foundation
import SluiceCore
import SluiceHTTP
import Synchronization

/// A vision model behind an OpenAI-compatible chat completions API (OpenAI, Azure OpenAI, Ollama, vLLM)
/// that describes an image (`extract.images.caption`).
///
/// It goes through the one request loop (`RemoteCall`) as the remote embedders and the reranker do: one
/// `RateBudget` (requests per minute, paused as a whole by a 429's `Retry-After`) and one
/// `AdaptiveConcurrency` limit as its gate, the one `RetryPolicy`, the libcurl client, answers read as
/// `ProviderAnswer`s:
/// - an image over `max_image_mb` is not sent, and one the server refuses for its size (413, a 400 about
///   size) is not sent again: ``Refusal`` with the reason (the caller indexes the OCR text alone);
/// - 429: the budget pauses for `Retry-After` (capped), then the image is sent again;
/// - 408/409/5xx, resets, time-outs: retried with backoff up to `max_retries`, then
///   ``SluiceError/Code/extractionFailed`` (the document fails and is tried again by the next run);
/// - 401, 403, an exhausted quota: ``SluiceError/Code/providerRefused``, and every later call fails the
///   same way at once, without a request (the run stops and exits 5);
/// - another 4xx (a model the server does not have, a model without vision): ``SluiceError/Code/extractionFailed``
///   naming the settings to check.
/// The image travels as a base64 `data:` URL inside the JSON body (`image_url.url`, with `detail`). The API
/// key travels in a header only and is scrubbed from every message.
package final class ImageCaptioner: Sendable {
    package typealias Settings = PipelineConfiguration.Extract.Images.Caption

    package let settings: Settings
    private let apiKey: String?
    private let url: String
    private let client: HTTPClient
    /// The one request loop, with the rate budget and the concurrency limit as its gate.
    private let call: RemoteCall<BudgetGate, ContinuousClock>
    private let counters = Mutex(CaptionRequestStats())

    /// A caption the model wrote, and the model that wrote it (the server's name for it when it said).
    package struct Caption: Sendable, Hashable {
        package var text: String
        package var model: String

        package init(text: String, model: String) {
            self.text = text
            self.model = model
        }
    }

    /// An image that is not captioned, for a reason that sending it again cannot change (its size).
    package struct Refusal: Error, Sendable, Hashable {
        package var reason: String
    }

    /// - Throws: ``SluiceError/Code/configuration`` for a missing or non-http(s) base URL, or an
    ///   `api_key_env` naming an unset variable.
    package init(
        settings: Settings,
        environment: [String: String] = ProcessInfo.processInfo.environment,
        client: HTTPClient? = nil,
        backoff: Backoff = Backoff(base: .milliseconds(250), cap: .seconds(8))
    ) throws {
        guard let base = settings.effectiveBaseURL else {
            throw SluiceError(
                .configuration,
                "extract.images.caption.base_url: required for \(settings.provider.rawValue)"
            )
        }
        guard base.hasPrefix("http://") || base.hasPrefix("https://") else {
            throw SluiceError(
                .configuration,
                "extract.images.caption.base_url: '\(redactedURL(base))' is not an http(s) URL"
            )
        }
        self.settings = settings
        apiKey = try EnvironmentSecret.value(
            of: settings.apiKeyEnv,
            key: "extract.images.caption.api_key_env",
            need: .ifNamed,
            environment: environment
        )
        var url = joinURL(base, "chat/completions")
        if settings.provider.sendsAPIVersion { url += "?api-version=\(settings.apiVersion)" }
        self.url = url
        var http = HTTPClient.Configuration()
        http.timeout = .milliseconds(Int64(settings.timeoutSeconds * 1000))
        http.connectTimeout = .seconds(10)
        self.client = client ?? HTTPClient(configuration: http)
        let gate = BudgetGate(
            budget: RateBudget(requestsPerMinute: settings.requestsPerMinute, tokensPerMinute: nil),
            concurrency: AdaptiveConcurrency(maximum: settings.parallelism)
        )
        call = RemoteCall(
            policy: RetryPolicy(
                maxRetries: settings.maxRetries,
                backoff: backoff,
                maxRetryAfter: .milliseconds(Int64(settings.maxRetryAfterSeconds * 1000)),
                sharesBudget: true
            ),
            gate: gate
        )
    }

    /// The name captions are marked with (`caption_model`) when the server does not name its model.
    package var modelName: String { settings.effectiveModel ?? settings.provider.rawValue }

    /// What the captioner did on the wire since it was made.
    package var requestStats: CaptionRequestStats { counters.withLock { $0 } }

    /// The request for an image: one user message holding the prompt and the image as a `data:` URL.
    func request(for image: [UInt8], mediaType: String) throws -> HTTPRequest {
        let dataURL = "data:\(mediaType);base64,\(Data(image).base64EncodedString())"
        var body: [String: Any] = [
            "messages": [
                [
                    "role": "user",
                    "content": [
                        ["type": "text", "text": settings.prompt],
                        ["type": "image_url", "image_url": ["url": dataURL, "detail": settings.detail]],
                    ],
                ]
            ],
            "max_tokens": settings.maxTokens,
            "temperature": 0,
        ]
        if let model = settings.effectiveModel { body["model"] = model }
        var headers: [(String, String)] = []
        if let apiKey {
            headers.append(
                settings.provider.sendsKeyInAPIKeyHeader ? ("api-key", apiKey) : ("Authorization", "Bearer \(apiKey)")
            )
        }
        let data = try JSONSerialization.data(withJSONObject: body, options: [.sortedKeys])
        var request = HTTPRequest.postJSON(
            url,
            body: Array(data),
            headers: headers,
            timeout: .milliseconds(Int64(settings.timeoutSeconds * 1000))
        )
        request.maxResponseBytes = 1 << 20
        return request
    }

    /// Describes an image.
    ///
    /// - Parameters:
    ///   - image: The image file's bytes.
    ///   - mediaType: Its MIME type (`image/png`, …).
    /// - Returns: The caption and the model that wrote it.
    /// - Throws: ``Refusal`` for an image over `max_image_mb` or refused for its size; ``SluiceError`` as
    ///   described on the type; `CancellationError`.
    package func caption(_ image: [UInt8], mediaType: String) async throws -> Caption {
        try call.checkRefusal()
        guard image.count <= settings.maxImageBytes else {
            counters.withLock { $0.refusedForSize += 1 }
            throw Refusal(
                reason:
                    "the image is \(Self.megabytes(image.count)) MB, over extract.images.caption.max_image_mb (\(Self.megabytes(settings.maxImageBytes)) MB): not sent"
            )
        }
        let request = try request(for: image, mediaType: mediaType)
        let answer: HTTPResponse = try await call.run(
            onRetry: { counters.withLock { $0.retries += 1 } },
            transportFailed: { SluiceError(.extractionFailed, "image caption: \(scrub($0.message))", cause: $0) },
            gaveUp: {
                SluiceError(
                    .extractionFailed,
                    "image caption: gave up after \($0.attempts) attempts\($0.rateLimited ? " (rate limited)" : ""): \(scrub($0.reason))"
                )
            },
            attempt: {
                counters.withLock { $0.requests += 1 }
                let response = try await client.send(request)
                // An image cannot be split: classified as one of two inputs, an answer about size comes back as
                // `.tooLarge` (the image's own refusal) rather than as a broken request.
                return ProviderAnswer(response, batchSize: 2).outcome(
                    of: response,
                    answer: response,
                    tooLarge: { reason in
                        counters.withLock { $0.refusedForSize += 1 }
                        return .stop(
                            Refusal(reason: "the vision model refused the image: \(scrub(reason))"),
                            headers: response.headers
                        )
                    },
                    refused: { SluiceError(.providerRefused, "the vision model refused to go on: \(scrub($0))") },
                    invalid: {
                        SluiceError(
                            .extractionFailed,
                            "image caption: the vision model at \(redactedURL(url)) will not take the request (check extract.images.caption.model and base_url): \(scrub($0))"
                        )
                    },
                    rateLimited: { counters.withLock { $0.rateLimited += 1 } }
                )
            }
        )
        let caption = try caption(from: answer)
        counters.withLock { $0.captions += 1 }
        return caption
    }

    /// Whether the API answers at all (`probeReachable`: a `GET` of the base URL, any HTTP status will do);
    /// ``SluiceError/Code/dependencyUnavailable`` if not (a run stops before taking any document, exit 6,
    /// as for the remote embedders). Nothing is captioned or counted.
    package func checkReachable() async throws {
        try await probeReachable(
            settings.effectiveBaseURL ?? url,
            what: "the vision model",
            client: client,
            timeout: .seconds(15),
            scrub: scrub
        )
    }

    /// The caption in a 2xx answer (`choices[0].message.content`, a string or a list of text parts).
    private func caption(from response: HTTPResponse) throws -> Caption {
        let object = try? JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]
        let message = ((object?["choices"] as? [[String: Any]])?.first?["message"]) as? [String: Any]
        var text = message?["content"] as? String
        if text == nil, let parts = message?["content"] as? [[String: Any]] {
            text = parts.compactMap { $0["text"] as? String }.joined(separator: "\n")
        }
        let trimmed = text?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        guard !trimmed.isEmpty else {
            throw SluiceError(
                .extractionFailed,
                "image caption: the vision model answered without a caption: \(scrub(providerMessage(response)))"
            )
        }
        return Caption(
            text: trimmed,
            model: (object?["model"] as? String).flatMap { $0.isEmpty ? nil : $0 } ?? modelName
        )
    }

    func scrub(_ message: String) -> String { EnvironmentSecret.redacting(apiKey, in: message) }

    static func megabytes(_ bytes: Int) -> String { String(format: "%.2f", Double(bytes) / 1_048_576) }
}

/// What an ``ImageCaptioner`` did on the wire.
package struct CaptionRequestStats: Sendable, Hashable {
    package var requests = 0
    package var captions = 0
    package var retries = 0
    package var rateLimited = 0
    /// Images not captioned for their size (over `max_image_mb`, or refused by the server).
    package var refusedForSize = 0
}
