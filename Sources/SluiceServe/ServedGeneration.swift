import Foundation
import Logging
import ServiceLifecycle
import SluiceCore
import SluicePipeline
import Synchronization

/// What `sluice serve` searches and answers from: the active index generation's searcher and answerer
/// (docs/GENERATIONS.md), replaced when a promote or a rollback switches generations.
///
/// A request takes the current pair once and uses it to its end: one started before a switch finishes on
/// the generation it started with (whose files the switch keeps, as the previous generation), one started
/// after uses the new one. The new pair is built completely (store opened, embedder loaded) before it
/// replaces the old one, so no request waits for it, fails or meets an empty index during the switch.
final class ServedGeneration: Sendable {
    struct Current: Sendable {
        var searcher: Searcher
        var answerer: Answerer?
        /// The generation whose document records go with the pair (``CheckpointStore/generation``; nil:
        /// the original one).
        var generation: String?
        /// The manifest's bytes the pair was made for (nil: no manifest).
        var manifest: Data?
    }

    private let current: Mutex<Current>
    /// `STATE/generations.json`.
    let manifestURL: URL
    /// Builds the active generation's pair again; nil: the served index never changes (tests, library users).
    let reload: (@Sendable () throws -> (Searcher, Answerer?, generation: String?))?

    init(
        searcher: Searcher,
        answerer: Answerer?,
        generation: String?,
        stateDirectory: URL,
        reload: (@Sendable () throws -> (Searcher, Answerer?, generation: String?))?
    ) {
        manifestURL = stateDirectory.appendingPathComponent("generations.json")
        current = Mutex(
            Current(
                searcher: searcher,
                answerer: answerer,
                generation: generation,
                manifest: FileManager.default.contents(atPath: manifestURL.path)
            )
        )
        self.reload = reload
    }

    var searcher: Searcher { current.withLock { $0.searcher } }
    var answerer: Answerer? { current.withLock { $0.answerer } }
    /// What is served now, taken once: a request that reads both the store and the document records uses
    /// one snapshot, so that the two are of one generation.
    var snapshot: Current { current.withLock { $0 } }

    /// Builds the active generation's pair again when the manifest changed since the current one was made.
    /// Blocks (opens a store, may load a model): call it off the cooperative pool.
    /// - Returns: whether the served generation was replaced.
    /// - Throws: what building the new pair threw (the old one stays served).
    func refresh() throws -> Bool {
        guard let reload else { return false }
        let manifest = FileManager.default.contents(atPath: manifestURL.path)
        guard manifest != current.withLock({ $0.manifest }) else { return false }
        let (searcher, answerer, generation) = try reload()
        current.withLock {
            $0 = Current(searcher: searcher, answerer: answerer, generation: generation, manifest: manifest)
        }
        return true
    }
}

/// Watches the generation manifest while `sluice serve` runs, and switches what it serves when it changes
/// (``ServedGeneration/refresh()``), once a second.
struct GenerationWatch: Service {
    let served: ServedGeneration
    let logger: Logger
    /// Brings the state's copy of a sharded deployment's manifest in line with the one its store keeps, or one
    /// state's with the store's copy of it (``IndexGenerations/followDeployment(storeCopy:)``: a promote made
    /// with another shard's state, or another state over the same store) before each look.
    var follow: (@Sendable () async throws -> Void)?
    /// ``follow`` runs at every `followEvery`-th look (each may be a request billed by the store: Pinecone's).
    var followEvery = 1
    var interval: Duration = .seconds(1)

    func run() async throws {
        // A service that returns ends the group: without a reload, it only waits for the shutdown.
        guard served.reload != nil else { return try await gracefulShutdown() }
        let executor = BlockingExecutor(label: "sl-generation-watch", threads: 1)
        defer { executor.shutdown() }
        let served = self.served
        // The same failure is said once, not at every look: it is said again when it changes or after a success.
        var lastFailure: String?
        var looks = 0
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            try? await Task.sleep(for: interval)
            do {
                if looks % max(1, followEvery) == 0 { try await follow?() }
                looks += 1
                if try await executor.run({ try served.refresh() }) {
                    logger.notice(
                        "the active index generation changed: searches use it from now on",
                        metadata: ["sluice-searcher": "\(served.searcher.sink.name)"]
                    )
                }
                lastFailure = nil
            } catch {
                let failure = "\(error)"
                guard failure != lastFailure else { continue }
                lastFailure = failure
                logger.warning(
                    "the active index generation changed, but it cannot be opened: still serving the one before (\(failure))"
                )
            }
        }
    }
}
