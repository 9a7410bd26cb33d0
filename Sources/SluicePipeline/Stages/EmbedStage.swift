import Foundation
import SluiceCore
import SluiceState

/// Embeds the chunks the cache did not have, in batches across documents, with at most `parallelism`
/// requests in flight; writes every vector to the cache before the document moves on; forwards each
/// document once all its chunks have vectors (or one of its chunks failed, which fails it: its batch
/// failed, or the vector returned for it is unusable — wrong dimension, not finite — which fails that
/// chunk's documents only, is never cached and never reaches the sink).
///
/// Identical chunk text in flight is embedded once: later chunks with the same hash wait for the first.
/// Those decisions (admission, waiting for identical chunks, request permits) are made by
/// ``EmbedStageStateMachine``; batches are formed by ``EmbedBatcherStateMachine``; the actor carries
/// them out (cache lookups, embedder calls, forwarding).
package actor EmbedStage {
    private enum State { case initial, running, draining, finished }

    private typealias Pending = EmbedStageStateMachine<CheckedContinuation<Void, Never>>.Text

    package nonisolated let meter: StageMeter
    private let embedder: any Embedder
    private let checkpoint: CheckpointStore
    /// The embedding cache's writes, committed with the other stages' waiting state writes.
    private let checkpointCommits: CheckpointCommits
    private let parallelism: Int
    private let tally: RunTally
    private let auditLog: FileHandle?
    /// Called once when the provider refuses to go on (the pipeline stops taking documents).
    private let onRefusal: @Sendable (SluiceError) -> Void
    /// The embedder's request counters when the stage started (the run's figures are the difference).
    private let requestStatsAtStart: EmbedderRequestStats?
    private var batcher: EmbedBatcherStateMachine<Pending, ContinuousClock.Instant>
    private var state = State.initial
    private var machine: EmbedStageStateMachine<CheckedContinuation<Void, Never>>
    private var output: StageChannel<DocumentWork>?

    package init(
        embedder: any Embedder,
        configuration: PipelineConfiguration.Embed,
        checkpoint: CheckpointStore,
        checkpointCommits: CheckpointCommits,
        tally: RunTally,
        auditLog: FileHandle?,
        onRefusal: @escaping @Sendable (SluiceError) -> Void = { _ in }
    ) {
        self.onRefusal = onRefusal
        self.requestStatsAtStart = embedder.requestStats
        self.embedder = embedder
        self.checkpoint = checkpoint
        self.checkpointCommits = checkpointCommits
        self.parallelism = configuration.requestsInFlight
        self.tally = tally
        self.auditLog = auditLog
        self.meter = StageMeter(name: "embed", workers: configuration.requestsInFlight)
        self.machine = EmbedStageStateMachine(parallelism: configuration.requestsInFlight)
        let limits = embedder.limits
        batcher = EmbedBatcherStateMachine(
            maxCount: min(configuration.batch, limits.maxBatchSize),
            maxTokens: min(configuration.maxBatchTokens, limits.maxTokensPerRequest),
            maxBytes: limits.maxRequestBytes == .max ? .max : max(1, limits.maxRequestBytes - 4096),
            linger: .milliseconds(configuration.lingerMilliseconds)
        )
    }

    package func run(input: StageChannel<DocumentWork>, output: StageChannel<DocumentWork>) async {
        precondition(state == .initial, "a stage runs once")
        state = .running
        self.output = output
        let clock = ContinuousClock()
        // A discarding group: a plain task group keeps every finished child until it is awaited, and a
        // run dispatches one child per batch — tens of thousands, retained to the end (measured: anonymous
        // memory grew by 100 MB over the 10× benchmark corpus).
        await withDiscardingTaskGroup { group in
            loop: while true {
                let timeout = batcher.deadline.map { max(clock.now.duration(to: $0), .zero) }
                let waitStart = clock.now
                // A cancelled task ends the stage as the end of the input does.
                let received = (try? await input.receive(timeout: timeout)) ?? .finished
                meter.starved(waitStart.duration(to: clock.now))
                switch received {
                case .element(let document):
                    meter.received()
                    for batch in await admit(document) { await dispatch(batch, in: &group) }
                case .timedOut:
                    if let batch = batcher.expire(now: clock.now) { await dispatch(batch, in: &group) }
                case .finished:
                    if let batch = batcher.flush() { await dispatch(batch, in: &group) }
                    break loop
                }
            }
            state = .draining
            machine.inputFinished()
        }
        precondition(machine.isFinished, "embed stage finished with documents still waiting")
        output.finish()
        state = .finished
    }

    /// Registers a document; returns batches that closed. Documents with nothing to embed go straight on.
    ///
    /// This is where chunks are deduplicated, once: against text already in flight and against the
    /// embedding cache, with no suspension between the two (the lookup is a read transaction).
    private func admit(_ document: DocumentWork) async -> [[Pending]] {
        var document = document
        if document.isSettled {
            await forward([document])
            return []
        }
        let cached: [ContentHash: [Float]]
        do {
            let unseen = machine.hashesToLookUp(document)
            cached = unseen.isEmpty ? [:] : try checkpoint.cachedEmbeddings(unseen, embedder: embedder.identity)
        } catch {
            document.fail(error, as: .state)
            await forward([document])
            return []
        }
        let admission = machine.admit(document, cached: cached)
        let chunks = document.chunks.count
        tally.update {
            $0.cacheHits += admission.cacheHits
            $0.chunks += chunks
        }
        switch admission.action {
        case .forward(let ready):
            await forward([ready])
            return []
        case .embed(let texts):
            var batches: [[Pending]] = []
            let now = ContinuousClock.now
            for text in texts {
                // Request bytes: the text plus JSON quoting and a separator (escapes are rare in prose).
                let bytes = text.text.utf8.count + 8
                batches += batcher.add(text, tokens: text.tokens, bytes: bytes, now: now)
            }
            return batches
        }
    }

    private func dispatch(_ batch: [Pending], in group: inout DiscardingTaskGroup) async {
        await acquirePermit()
        let embedder = self.embedder
        let checkpointCommits = self.checkpointCommits
        let identity = embedder.identity
        let auditLog = self.auditLog
        let meter = self.meter
        group.addTask {
            let clock = ContinuousClock()
            let start = clock.now
            // One result per text: a vector that is unusable fails its own text (and so its documents),
            // not the texts it shared a request with.
            let results: [Result<[Float], SluiceError>]
            do {
                if let auditLog {
                    let line = batch.map(\.hash.hex).joined(separator: "\n") + "\n"
                    auditLog.write(Data(line.utf8))
                }
                let vectors = try await embedder.embed(batch.map(\.text), tokenCounts: batch.map(\.tokens))
                guard vectors.count == batch.count else {
                    throw SluiceError(
                        .embeddingFailed,
                        "the embedder returned \(vectors.count) vectors for \(batch.count) texts"
                    )
                }
                let checked = vectors.map { Self.check($0, dimensions: identity.dimensions) }
                let entries = zip(batch, checked).compactMap { item, result in
                    (try? result.get()).map { (item.hash, $0) }
                }
                if !entries.isEmpty {
                    try await checkpointCommits.write(.cacheEmbeddings(entries, embedder: identity))
                }
                results = checked
            } catch {
                results = Array(repeating: .failure(SluiceError.wrap(error, as: .embeddingFailed)), count: batch.count)
            }
            meter.worked(
                start.duration(to: clock.now),
                bytes: batch.reduce(0) { $0 + $1.text.utf8.count },
                itemsOut: batch.count
            )
            await self.complete(batch, results)
        }
    }

    /// A vector the cache and the sink may take, or the reason it is refused: the wrong dimension, or
    /// values that are not finite (``VectorMath/problem(_:)``).
    static func check(_ vector: [Float], dimensions: Int) -> Result<[Float], SluiceError> {
        if vector.count != dimensions {
            return .failure(
                SluiceError(
                    .embeddingFailed,
                    "the embedder returned vectors of \(vector.count) dimensions, expected \(dimensions) (embed.dimensions)"
                )
            )
        }
        if let problem = VectorMath.problem(vector) { return .failure(SluiceError(.embeddingFailed, problem)) }
        return .success(vector)
    }

    private func complete(_ batch: [Pending], _ results: [Result<[Float], SluiceError>]) async {
        let wire = embedder.requestStats
        let start = requestStatsAtStart
        tally.update { stats in
            if let wire, let start {
                // A remote embedder counts what really went over the wire (retries, split halves).
                stats.embedRequests = wire.requests - start.requests
                stats.embedRetries = wire.retries - start.retries
                stats.rateLimited = wire.rateLimited - start.rateLimited
            } else {
                stats.embedRequests += 1
            }
            for (item, result) in zip(batch, results) {
                if case .success = result {
                    stats.chunksEmbedded += 1
                    stats.tokensEmbedded += item.tokens
                }
            }
        }
        let completion = machine.complete(batch.map(\.hash), results)
        if let refusal = completion.refusal { onRefusal(refusal) }
        await forward(completion.ready)
        // Released after forwarding: a batch whose documents wait for room downstream holds its permit.
        machine.releasePermit()?.resume()
    }

    private func forward(_ documents: [DocumentWork]) async {
        guard let output else { return }
        let clock = ContinuousClock()
        for document in documents {
            let start = clock.now
            if (try? await output.send(document)) == true { meter.blocked(start.duration(to: clock.now)) }
        }
    }

    private func acquirePermit() async {
        await withCheckedContinuation { continuation in
            if case .proceed = machine.acquirePermit(continuation) { continuation.resume() }
        }
    }
}
