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

    /// The embedder identity the state recorded for the index (``Searcher/indexEmbedder``).
    public var indexEmbedder: String?
    /// The second stage of the retrieval (`search.rerank`, ``Searcher/reranking``): the passages are the
    /// reranker's best, each source with its `rerank_score`, and the summary says whether it applied.
    public var reranking: SearchReranking?
    /// How hybrid retrieval merges its rankings (`search.fusion`, `ask --fusion`).
    public var fusion: SearchFusion = .default

    /// - Parameters:
    ///   - configuration: The pipeline's `answer` section.
    ///   - embedder: The index's embedder (questions are embedded as the chunks were).
    ///   - sink: The index.
    ///   - tokenCounter: Counts the passages' budget; nil: cl100k_base.
    ///   - environment: Where `answer.api_key_env` is looked up.
    /// - Throws: ``SluiceError/Code/configuration`` for an unusable `answer` section (Azure without
    ///   `base_url`, an unset key variable, a missing tokenizer file).
    public init(
        configuration: PipelineConfiguration.Answer,
        embedder: any Embedder,
        sink: any VectorSink,
        tokenCounter: (any TokenCounter)? = nil,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws {
        try self.init(
            configuration: configuration,
            embedder: embedder,
            sink: sink,
            tokenCounter: tokenCounter,
            environment: environment,
            client: nil
        )
    }

    /// With a given HTTP client (nil: one of its own with `answer.timeout_seconds`).
    package init(
        configuration: PipelineConfiguration.Answer,
        embedder: any Embedder,
        sink: any VectorSink,
        tokenCounter: (any TokenCounter)? = nil,
        environment: [String: String] = ProcessInfo.processInfo.environment,
        client: HTTPClient?
    ) throws {
        let counter = try tokenCounter ?? BPETokenizer.named("cl100k_base")
        try self.init(
            configuration: configuration,
            embedder: embedder,
            sink: sink,
            tokenCounter: counter,
            chat: ChatClient(
                configuration: configuration,
                environment: environment,
                client: client,
                tokenCounter: counter
            )
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
    ///
    /// - Parameters:
    ///   - question: The question; it is also the search query.
    ///   - filter: Only passages whose metadata match it (pushed down to the store, as for `search`).
    ///   - mode: `vector`, `keyword` or `hybrid`; nil: the store's default, as for `search`.
    ///   - k: Passages to retrieve; nil: `answer.k`.
    public func answer(
        _ question: String,
        k: Int? = nil,
        filter: SearchFilter? = nil,
        mode: SearchMode? = nil
    ) -> AsyncThrowingStream<AnswerEvent, any Error> {
        let (stream, continuation) = AsyncThrowingStream<AnswerEvent, any Error>.makeStream()
        let task = Task {
            do {
                try await answer(question, k: k, filter: filter, mode: mode) { continuation.yield($0) }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    /// The same events, handed to `emit` in order.
    public func answer(
        _ question: String,
        k: Int? = nil,
        filter: SearchFilter? = nil,
        mode: SearchMode? = nil,
        emit: (AnswerEvent) async throws -> Void
    ) async throws {
        let outcome = try await retrieve(question: question, k: k ?? configuration.k, filter: filter, mode: mode)
        let results = outcome.results
        let prompt = AnswerPrompt(
            question: question,
            hits: results,
            maxContextTokens: configuration.maxContextTokens,
            counter: tokenCounter,
            instructions: configuration.systemPrompt
        )
        guard !prompt.sources.isEmpty else {
            let reason = Self.nothingRelevantReason(
                retrieved: results.count,
                filtered: filter != nil,
                minScore: configuration.minScore
            )
            return try await emit(.nothingRelevant(reason))
        }
        var text = ""
        var gate = CitationGate(sources: prompt.sources.count, holding: configuration.requireCitations)
        let summary = try await chat.complete(prompt) { piece in
            text += piece
            if let release = gate.take(piece) { try await emit(.text(release)) }
        }
        var check = AnswerCheck(answer: text, sources: prompt.sources)
        if gate.isHolding { check.withheldAnswer = text }
        try await emit(.checked(check))
        try await emit(
            .sources(
                check.ordered(prompt.sources).map { source in
                    var source = source
                    source.cited = check.cited.contains(source.number)
                    return source
                }
            )
        )
        let model = summary.model ?? configuration.effectiveModel
        var finished = AnswerSummary(model: model, usage: summary.usage, finishReason: summary.finishReason)
        finished.rerank = outcome.rerank
        try await emit(.finished(finished))
    }

    /// The passages for a question, best first, at least `answer.min_score` similar (as `search
    /// --min-score` judges it): the one place retrieval happens, through the ``Searcher`` that `search`
    /// uses (identical texts collapsed, the index's embedder checked).
    func retrieve(question: String, k: Int, filter: SearchFilter?, mode: SearchMode?) async throws -> SearchOutcome {
        let query = SearchQuery(text: question, k: k, filter: filter, mode: mode, minScore: configuration.minScore)
        var searcher = Searcher(embedder: embedder, sink: sink)
        searcher.indexEmbedder = indexEmbedder
        searcher.reranking = reranking
        searcher.fusion = fusion
        return try await searcher.searchOutcome(query)
    }

    /// Why no passage went to the model.
    static func nothingRelevantReason(retrieved: Int, filtered: Bool, minScore: Double?) -> String {
        if retrieved > 0 { return "nothing relevant was retrieved: the passages retrieved have no text" }
        var conditions: [String] = []
        if filtered { conditions.append("matches the filter") }
        if let minScore { conditions.append("scores at least answer.min_score (\(minScore))") }
        guard !conditions.isEmpty else {
            return "nothing was retrieved: the index has no passages (run `sluice run` first)"
        }
        return "nothing relevant was retrieved: no passage " + conditions.joined(separator: " and ")
    }
}
