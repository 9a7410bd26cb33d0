import SluiceCore
import SluiceSinks
import SluiceState

/// Where each index generation keeps its vectors in a store behind a server, and the stable name by which
/// readers outside Sluice follow the active one (docs/GENERATIONS.md, "How it is stored"):
///
/// - pgvector: a table per generation (`g0` is `sink.table` itself, `gN` the table `<table>_gN`), and the
///   view `<table>_active` over the active generation's table, replaced in one transaction at every switch;
/// - Qdrant: a collection per generation (`<collection>_gN`), and the collection alias
///   `<collection>_active`, moved in one request;
/// - Chroma: a collection per generation (`<collection>_gN`); outside readers read the collection the
///   manifest names (Chroma has no alias).
///
/// Sluice's own readers follow the manifest, as with the local store; the stable name follows it after each
/// change (``publish(active:)``), and a change killed before it is repaired by the next one, or by the next run.
struct RemoteGenerationStore: Sendable {
    /// The pipeline's settings pointed at the original generation `g0` (its table or collection).
    let base: PipelineConfiguration

    /// The store of `configuration` (the pipeline file's, or a generation's: ``point(_:at:)``); nil for a
    /// kind without generations in a server (the local store has its own layout, and the others none yet).
    init?(configuration: PipelineConfiguration) {
        let kind = configuration.sink.kind
        guard kind == .pgvector || kind == .qdrant || kind == .chroma else { return nil }
        var base = configuration
        if let generation = configuration.generation, generation != GenerationManifest.original {
            let suffix = "_" + generation
            if kind == .pgvector, base.sink.table.hasSuffix(suffix) {
                base.sink.table.removeLast(suffix.count)
            } else if kind != .pgvector, base.sink.collection.hasSuffix(suffix) {
                base.sink.collection.removeLast(suffix.count)
            }
        }
        base.generation = nil
        self.base = base
    }

    var kind: PipelineConfiguration.Sink.Kind { base.sink.kind }

    /// The table (pgvector) or collection of the original generation's.
    var baseName: String { kind == .pgvector ? base.sink.table : base.sink.collection }

    /// The table or collection of `generation`.
    func name(of generation: String) -> String {
        generation == GenerationManifest.original ? baseName : "\(baseName)_\(generation)"
    }

    /// The name outside readers query, which always shows the active generation: the view (pgvector) or the
    /// collection alias (Qdrant); nil where the store has none (Chroma: readers follow the manifest).
    var stableName: String? {
        kind == .chroma ? nil : "\(baseName)_active"
    }

    /// Points `configuration` at `generation`'s table or collection.
    func point(_ configuration: inout PipelineConfiguration, at generation: String) {
        if kind == .pgvector {
            configuration.sink.table = name(of: generation)
        } else {
            configuration.sink.collection = name(of: generation)
        }
    }

    /// Where `generation` is, as `sluice generation status` shows it.
    func location(of generation: String) -> String {
        (kind == .pgvector ? "table " : "collection ") + name(of: generation)
    }

    /// The store of `generation` (built, not connected: every store connects on its first call).
    /// - Throws: ``SluiceError/Code/configuration`` for a name the store refuses (too long, say).
    func sink(of generation: String) throws -> any VectorSink {
        var configuration = base
        point(&configuration, at: generation)
        configuration.generation = generation
        return try SinkFactory.make(configuration, readOnly: false)
    }

    /// Whether `generation`'s table or collection exists (a run created it).
    func exists(_ generation: String) async throws -> Bool {
        try await sink(of: generation).info().exists
    }

    /// Makes the stable name show `active` (nothing where the store has none, or before the generation's
    /// first run created its table or collection), unless it does already.
    func publish(active: String) async throws {
        guard let stableName else { return }
        let sink = try sink(of: active)
        if let table = sink as? PgvectorSink {
            let label = "sluice index generation \(active): \(name(of: active))"
            guard try await table.viewLabel(stableName) != label else { return }
            try await table.publishView(stableName, label: label)
        } else if let collection = sink as? QdrantSink {
            guard try await collection.aliasTarget(stableName) != name(of: active) else { return }
            try await collection.publishAlias(stableName)
        }
    }

    /// Deletes the tables or collections of `generations` (those that do not exist are skipped).
    func delete(_ generations: [String]) async throws {
        for generation in generations {
            try await sink(of: generation).drop()
        }
    }
}
