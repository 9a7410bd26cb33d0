import SluiceCore

/// The decisions of the ``EmbedStage`` about deduplication and request permits, free of tasks and I/O
/// so they can be tested directly (the batches themselves are formed by ``EmbedBatcherStateMachine``).
///
/// - **Admission**: a document's chunks are matched against the embedding cache (the stage looks up the
///   hashes ``hashesToLookUp(_:)`` names, then calls ``admit(_:cached:)``) and against the chunks in
///   flight. Only the first chunk of each text is embedded; identical chunks wait for it.
/// - **Completion**: ``complete(_:_:)`` hands a batch's vectors (or failures) to every chunk waiting for
///   them, and returns the documents whose chunks all have vectors (or one of which failed: the document
///   fails with that reason, as the first chunk of its text did).
/// - **Permits**: at most `parallelism` batches in flight; a dispatcher beyond waits, and a released
///   permit passes to the next waiter.
///
/// A hash stays in flight from its admission until its batch completes; the stage caches a batch's
/// vectors before it calls ``complete(_:_:)``, so a hash is always in flight or in the cache and no
/// identical text is sent twice, whatever the timing.
struct EmbedStageStateMachine<PermitToken> {
    private enum State {
        /// Documents are being admitted.
        case admitting
        /// The input ended: no more admissions; documents already admitted still complete.
        case draining
    }

    /// A document waiting for vectors.
    private struct Waiting {
        var document: DocumentWork
        var remaining: Int
        var failure: SluiceError?
    }

    /// A text to embed: the first chunk in flight with this hash.
    struct Text: Equatable, Sendable {
        var hash: ContentHash
        var text: String
        var tokens: Int
    }

    enum AdmitAction {
        /// Every chunk has its vector (from the cache): the document goes on now.
        case forward(DocumentWork)
        /// The document waits for its chunks' vectors; these texts are new in flight and must be embedded
        /// (empty when every missing chunk waits for an identical one already in flight).
        case embed([Text])
    }

    struct Admission {
        var action: AdmitAction
        /// Chunks whose vector came from the cache.
        var cacheHits: Int
    }

    struct Completion {
        /// Documents whose every chunk is settled, in the order they became ready.
        var ready: [DocumentWork]
        /// The first time a batch fails because the provider refuses to go on: the reason (reported once).
        var refusal: SluiceError?
    }

    enum AcquireAction {
        /// A permit was free and is now the caller's.
        case proceed
        /// None is free: the caller's token waits for ``releasePermit()``.
        case suspend
    }

    private var state = State.admitting
    private let parallelism: Int
    private var waiting: [Int: Waiting] = [:]
    private var waitersByHash: [ContentHash: [(document: Int, chunk: Int)]] = [:]
    private var nextDocument = 0
    private var inFlight = 0
    private var permitWaiters: [PermitToken] = []
    private var refused = false

    init(parallelism: Int) {
        precondition(parallelism >= 1)
        self.parallelism = parallelism
    }

    /// Documents waiting for vectors.
    var waitingDocuments: Int { waiting.count }
    /// Permits held (batches dispatched and not yet released).
    var permitsInUse: Int { inFlight }
    /// Whether the input ended and every admitted document was completed.
    var isFinished: Bool { state == .draining && waiting.isEmpty }

    // MARK: Admission

    /// The hashes of `document`'s chunks to look up in the embedding cache: those not already in flight.
    func hashesToLookUp(_ document: DocumentWork) -> [ContentHash] {
        document.chunks.map(\.hash).filter { waitersByHash[$0] == nil }
    }

    /// Admits a pending document, given what the cache holds for (some of) its chunks' hashes.
    ///
    /// A cached vector that is not finite (written by a version that did not check) is embedded again,
    /// never reused.
    mutating func admit(_ document: DocumentWork, cached: [ContentHash: [Float]]) -> Admission {
        precondition(state == .admitting, "admit after the input ended")
        precondition(!document.isSettled, "a settled document has nothing to embed")
        var document = document
        var missing: [Int] = []
        var hits = 0
        for index in document.chunks.indices {
            if let vector = cached[document.chunks[index].hash], VectorMath.problem(vector) == nil {
                document.chunks[index].vector = vector
                hits += 1
            } else {
                missing.append(index)
            }
        }
        if missing.isEmpty { return Admission(action: .forward(document), cacheHits: hits) }
        let id = nextDocument
        nextDocument += 1
        var texts: [Text] = []
        for index in missing {
            let chunk = document.chunks[index]
            if waitersByHash[chunk.hash] != nil {
                waitersByHash[chunk.hash]!.append((id, index))
                continue
            }
            waitersByHash[chunk.hash] = [(id, index)]
            texts.append(Text(hash: chunk.hash, text: chunk.embedText, tokens: chunk.embedTokens))
        }
        waiting[id] = Waiting(document: document, remaining: missing.count)
        return Admission(action: .embed(texts), cacheHits: hits)
    }

    /// The input ended: no more admissions.
    mutating func inputFinished() {
        state = .draining
    }

    // MARK: Completion

    /// A batch finished: one result per hash, in the batch's order. Each hash leaves the set in flight.
    mutating func complete(_ hashes: [ContentHash], _ results: [Result<[Float], SluiceError>]) -> Completion {
        precondition(hashes.count == results.count, "one result per text")
        var completion = Completion(ready: [], refusal: nil)
        if !refused {
            for case .failure(let error) in results where error.code == .providerRefused {
                refused = true
                completion.refusal = error
                break
            }
        }
        for (hash, result) in zip(hashes, results) {
            for waiter in waitersByHash.removeValue(forKey: hash) ?? [] {
                // Mutate in place: copying a waiting document per chunk would be quadratic.
                guard waiting[waiter.document] != nil else { continue }
                switch result {
                case .success(let vector): waiting[waiter.document]!.document.chunks[waiter.chunk].vector = vector
                case .failure(let error):
                    if waiting[waiter.document]!.failure == nil { waiting[waiter.document]!.failure = error }
                }
                waiting[waiter.document]!.remaining -= 1
                if waiting[waiter.document]!.remaining == 0, var entry = waiting.removeValue(forKey: waiter.document) {
                    if let failure = entry.failure { entry.document.fail(failure, as: .embeddingFailed) }
                    completion.ready.append(entry.document)
                }
            }
        }
        return completion
    }

    // MARK: Permits

    /// Takes a permit for one batch, or queues `token` until one is released.
    mutating func acquirePermit(_ token: PermitToken) -> AcquireAction {
        if inFlight < parallelism {
            inFlight += 1
            return .proceed
        }
        permitWaiters.append(token)
        return .suspend
    }

    /// Gives a permit back (after a batch's documents were forwarded).
    /// - Returns: the waiter the permit passes to, which the owner must resume; nil if none waited.
    mutating func releasePermit() -> PermitToken? {
        precondition(inFlight > 0, "a permit released that was not taken")
        if permitWaiters.isEmpty {
            inFlight -= 1
            return nil
        }
        return permitWaiters.removeFirst()
    }
}
