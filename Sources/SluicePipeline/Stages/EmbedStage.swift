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
package actor EmbedStage {
    private enum State { case initial, running, draining, finished }

    private struct Waiting {
        var document: DocumentWork
        var remaining: Int
        var failure: SluiceError?
    }

    private struct Pending: Sendable {
        var hash: ContentHash
        var text: String
        var tokens: Int
    }

    package nonisolated let meter: StageMeter
    private let embedder: any Embedder
    private let checkpoint: CheckpointStore
    private let stateExecutor: BlockingExecutor
    private let parallelism: Int
    private let tally: RunTally
    private let auditLog: FileHandle?
    /// Called once when the provider refuses to go on (the pipeline stops taking documents).
    private let onRefusal: @Sendable (SluiceError) -> Void
    private var refused = false
    /// The embedder's request counters when the stage started (the run's figures are the difference).
    private let requestStatsAtStart: EmbedderRequestStats?
    private var batcher: EmbedBatcherStateMachine<Pending, ContinuousClock.Instant>
    private var state = State.initial
    private var waiting: [Int: Waiting] = [:]
    private var waitersByHash: [ContentHash: [(document: Int, chunk: Int)]] = [:]
    private var nextDocument = 0
    private var inFlight = 0
    private var permitWaiters: [CheckedContinuation<Void, Never>] = []
    private var output: StageChannel<DocumentWork>?

    package init(
        embedder: any Embedder, configuration: PipelineConfiguration.Embed, checkpoint: CheckpointStore,
        stateExecutor: BlockingExecutor, tally: RunTally, auditLog: FileHandle?,
        onRefusal: @escaping @Sendable (SluiceError) -> Void = { _ in }
    ) {
        self.onRefusal = onRefusal
        self.requestStatsAtStart = embedder.requestStats
        self.embedder = embedder
        self.checkpoint = checkpoint
        self.stateExecutor = stateExecutor
        self.parallelism = configuration.parallelism
        self.tally = tally
        self.auditLog = auditLog
        self.meter = StageMeter(name: "embed", workers: configuration.parallelism)
        let limits = embedder.limits
        batcher = EmbedBatcherStateMachine(
            maxCount: min(configuration.batch, limits.maxBatchSize),
            maxTokens: min(configuration.maxBatchTokens, limits.maxTokensPerRequest),
            maxBytes: limits.maxRequestBytes == .max ? .max : max(1, limits.maxRequestBytes - 4096),
            linger: .milliseconds(configuration.lingerMilliseconds))
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
        }
        precondition(waiting.isEmpty, "embed stage finished with documents still waiting")
        output.finish()
        state = .finished
    }

    /// Registers a document; returns batches that closed. Documents with nothing to embed go straight on.
    ///
    /// This is where chunks are deduplicated, once: against text already in flight (`waitersByHash`) and
    /// against the embedding cache. Both are checked here, on the stage's actor, because a batch's vectors
    /// are cached before its hashes leave `waitersByHash`: a hash is always in one or the other, so no
    /// identical text is sent twice, whatever the timing.
    private func admit(_ document: DocumentWork) async -> [[Pending]] {
        var document = document
        var missing: [Int] = []
        if !document.isSettled {
            let unseen = document.chunks.map(\.hash).filter { waitersByHash[$0] == nil }
            do {
                let cached = unseen.isEmpty ? [:] : try checkpoint.cachedEmbeddings(unseen, embedder: embedder.identity)
                var hits = 0
                for index in document.chunks.indices {
                    // A cached vector that is not finite (written by a version that did not check) is
                    // embedded again, never reused.
                    if let vector = cached[document.chunks[index].hash], VectorMath.problem(vector) == nil {
                        document.chunks[index].vector = vector
                        hits += 1
                    } else {
                        missing.append(index)
                    }
                }
                let chunks = document.chunks.count
                tally.update {
                    $0.cacheHits += hits
                    $0.chunks += chunks
                }
            } catch {
                document.fail(error, as: .state)
                missing = []
            }
        }
        if document.isSettled || missing.isEmpty {
            await forward([document])
            return []
        }
        let id = nextDocument
        nextDocument += 1
        waiting[id] = Waiting(document: document, remaining: missing.count)
        var batches: [[Pending]] = []
        let now = ContinuousClock.now
        for index in missing {
            let chunk = document.chunks[index]
            if waitersByHash[chunk.hash] != nil {
                waitersByHash[chunk.hash]!.append((id, index))
                continue
            }
            waitersByHash[chunk.hash] = [(id, index)]
            // Request bytes: the text plus JSON quoting and a separator (escapes are rare in prose).
            let bytes = chunk.chunk.text.utf8.count + 8
            batches += batcher.add(Pending(hash: chunk.hash, text: chunk.chunk.text, tokens: chunk.chunk.tokenCount), tokens: chunk.chunk.tokenCount, bytes: bytes, now: now)
        }
        return batches
    }

    private func dispatch(_ batch: [Pending], in group: inout DiscardingTaskGroup) async {
        await acquirePermit()
        let embedder = self.embedder
        let checkpoint = self.checkpoint
        let stateExecutor = self.stateExecutor
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
                    throw SluiceError(.embeddingFailed, "the embedder returned \(vectors.count) vectors for \(batch.count) texts")
                }
                let checked = vectors.map { Self.check($0, dimensions: identity.dimensions) }
                let entries = zip(batch, checked).compactMap { item, result in (try? result.get()).map { (item.hash, $0) } }
                if !entries.isEmpty {
                    try await stateExecutor.run { try checkpoint.cacheEmbeddings(entries, embedder: identity) }
                }
                results = checked
            } catch {
                results = Array(repeating: .failure(SluiceError.wrap(error, as: .embeddingFailed)), count: batch.count)
            }
            meter.worked(start.duration(to: clock.now), bytes: batch.reduce(0) { $0 + $1.text.utf8.count }, itemsOut: batch.count)
            await self.complete(batch, results)
        }
    }

    /// A vector the cache and the sink may take, or the reason it is refused: the wrong dimension, or
    /// values that are not finite (``VectorMath/problem(_:)``).
    static func check(_ vector: [Float], dimensions: Int) -> Result<[Float], SluiceError> {
        if vector.count != dimensions {
            return .failure(SluiceError(.embeddingFailed, "the embedder returned vectors of \(vector.count) dimensions, expected \(dimensions) (embed.dimensions)"))
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
        let refusal = results.lazy.compactMap { result -> SluiceError? in
            if case .failure(let error) = result, error.code == .providerRefused { return error }
            return nil
        }.first
        if let refusal, !refused {
            refused = true
            onRefusal(refusal)
        }
        var ready: [DocumentWork] = []
        for (item, result) in zip(batch, results) {
            for waiter in waitersByHash.removeValue(forKey: item.hash) ?? [] {
                // Mutate in place: copying a waiting document per chunk would be quadratic.
                guard waiting[waiter.document] != nil else { continue }
                switch result {
                case .success(let vector): waiting[waiter.document]!.document.chunks[waiter.chunk].vector = vector
                case .failure(let error): if waiting[waiter.document]!.failure == nil { waiting[waiter.document]!.failure = error }
                }
                waiting[waiter.document]!.remaining -= 1
                if waiting[waiter.document]!.remaining == 0, var entry = waiting.removeValue(forKey: waiter.document) {
                    if let failure = entry.failure { entry.document.fail(failure, as: .embeddingFailed) }
                    ready.append(entry.document)
                }
            }
        }
        await forward(ready)
        releasePermit()
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
        if inFlight < parallelism {
            inFlight += 1
            return
        }
        await withCheckedContinuation { permitWaiters.append($0) }
    }

    private func releasePermit() {
        if permitWaiters.isEmpty {
            inFlight -= 1
        } else {
            permitWaiters.removeFirst().resume()
        }
    }
}
