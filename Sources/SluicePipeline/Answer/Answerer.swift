import Foundation
import SluiceCore
import SluiceEmbed
import SluiceHTTP

/// Answers a question from a pipeline's index: retrieves passages, fits them into the prompt's budget,
/// streams the chat model's answer and ends with the numbered sources (docs/DESIGN.md §10, "ask").
///
/// Nothing relevant retrieved (no hit, or none scoring at least `answer.min_score`) ends with
/// ``AnswerEvent/nothingRelevant(_:)`` without calling the model. The CLI (`sluice ask`) and a service
/// use the same events.
public struct Answerer: Sendable {
    public let configuration: PipelineConfiguration.Answer
    private let embedder: any Embedder
    private let sink: any VectorSink
    private let tokenCounter: any TokenCounter
    private let chat: ChatClient

    /// - Parameters:
    ///   - configuration: The pipeline's `answer` section.
    ///   - embedder: The index's embedder (questions are embedded as the chunks were).
    ///   - sink: The index.
    ///   - tokenCounter: Counts the passages' budget; nil: cl100k_base.
    ///   - environment: Where `answer.api_key_env` is looked up.
    ///   - client: The HTTP client; nil: one of its own with `answer.timeout_seconds`.
    /// - Throws: ``SluiceError/Code/configuration`` for an unusable `answer` section (Azure without
    ///   `base_url`, an unset key variable, a missing tokenizer file).
    public init(
        configuration: PipelineConfiguration.Answer,
        embedder: any Embedder,
        sink: any VectorSink,
        tokenCounter: (any TokenCounter)? = nil,
        environment: [String: String] = ProcessInfo.processInfo.environment,
        client: HTTPClient? = nil
    ) throws {
        try self.init(
            configuration: configuration,
            embedder: embedder,
            sink: sink,
            tokenCounter: tokenCounter,
            chat: ChatClient(configuration: configuration, environment: environment, client: client)
        )
    }

    init(
        configuration: PipelineConfiguration.Answer,
        embedder: any Embedder,
        sink: any VectorSink,
        tokenCounter: (any TokenCounter)?,
        chat: ChatClient
    ) throws {
        self.configuration = configuration
        self.embedder = embedder
        self.sink = sink
        self.tokenCounter = try tokenCounter ?? BPETokenizer.named("cl100k_base")
        self.chat = chat
    }

    /// The events of the answer to `question` (see ``AnswerEvent``); the stream throws the failure that
    /// ended it (a ``SluiceError``). Dropping the stream, or cancelling its reader, stops the request.
    public func answer(_ question: String) -> AsyncThrowingStream<AnswerEvent, any Error> {
        let (stream, continuation) = AsyncThrowingStream<AnswerEvent, any Error>.makeStream()
        let task = Task {
            do {
                try await answer(question) { continuation.yield($0) }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    /// The same events, handed to `emit` in order.
    public func answer(_ question: String, emit: (AnswerEvent) async throws -> Void) async throws {
        let hits = try await retrieve(question: question, k: configuration.k)
        let relevant = configuration.minScore.map { minimum in hits.filter { Double($0.score) >= minimum } } ?? hits
        let prompt = AnswerPrompt(
            question: question,
            hits: relevant,
            maxContextTokens: configuration.maxContextTokens,
            counter: tokenCounter,
            instructions: configuration.systemPrompt
        )
        guard !prompt.sources.isEmpty else {
            return try await emit(
                .nothingRelevant(Self.nothingRelevantReason(hits: hits, minScore: configuration.minScore))
            )
        }
        var text = ""
        let summary = try await chat.complete(prompt) { piece in
            text += piece
            try await emit(.text(piece))
        }
        let cited = AnswerCitations.numbers(in: text, sources: prompt.sources.count)
        try await emit(
            .sources(
                prompt.sources.map { source in
                    var source = source
                    source.cited = cited.contains(source.number)
                    return source
                }
            )
        )
        let model = summary.model ?? configuration.effectiveModel
        try await emit(.finished(AnswerSummary(model: model, usage: summary.usage, finishReason: summary.finishReason)))
    }

    /// The passages for a question, best first: the one place retrieval happens, so that filters and
    /// search modes (issue 16) change it alone.
    func retrieve(question: String, k: Int) async throws -> [SearchHit] {
        let vector = try await embedder.embed([question])[0]
        if let problem = VectorMath.problem(vector) { throw SluiceError(.embeddingFailed, "the question: \(problem)") }
        return try await sink.search(vector, k: k)
    }

    /// Why no passage went to the model.
    static func nothingRelevantReason(hits: [SearchHit], minScore: Double?) -> String {
        guard let best = hits.map(\.score).max() else {
            return "nothing was retrieved: the index has no passages (run `sluice run` first)"
        }
        if let minScore, Double(best) < minScore {
            return "nothing relevant was retrieved: the best of \(hits.count) passages scores "
                + String(format: "%.4f", best) + ", below answer.min_score (\(minScore))"
        }
        return "nothing relevant was retrieved: the passages retrieved have no text"
    }
}
