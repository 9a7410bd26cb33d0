import Foundation
import SluiceCore
import SluiceSinks
import SluiceState

#if canImport(Glibc)
import Glibc
#endif

/// Where each index generation keeps its vectors in a store with a name per generation (a store behind a
/// server, or JSONL files), and the stable name by which readers outside Sluice follow the active one
/// (docs/GENERATIONS.md, "How it is stored"):
///
/// - pgvector: a table per generation (`g0` is `sink.table` itself, `gN` the table `<table>_gN`), and the
///   view `<table>_active` over the active generation's table, replaced in one transaction at every switch;
/// - Qdrant: a collection per generation (`<collection>_gN`), and the collection alias
///   `<collection>_active`, moved in one request;
/// - Chroma: a collection per generation (`<collection>_gN`); outside readers read the collection the
///   manifest names (Chroma has no alias);
/// - Pinecone: a namespace per generation (`<namespace>_gN`; `gN` in an index's default namespace); outside
///   readers query the namespace the manifest names (a namespace has no alias);
/// - JSONL: a file (or folder of shards) per generation (`<path>_gN.jsonl`, `<path>_gN`), and the symbolic
///   link `<path>_active.jsonl` (`<path>_active`) to the active one, replaced by one rename(2)
///   (``JSONLGenerationLink``).
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
        let kinds: [PipelineConfiguration.Sink.Kind] = [.pgvector, .qdrant, .chroma, .pinecone, .jsonl]
        guard kinds.contains(kind) else { return nil }
        var base = configuration
        if let generation = configuration.generation, generation != GenerationManifest.original {
            let suffix = "_" + generation
            if kind == .jsonl {
                base.sink.path = JSONLGenerationLink.removing(suffix, from: base.sink.path)
            } else if kind == .pinecone {
                let namespace = base.sink.namespace
                base.sink.namespace =
                    namespace == generation
                    ? "" : namespace.hasSuffix(suffix) ? String(namespace.dropLast(suffix.count)) : namespace
            } else if kind == .pgvector {
                base.sink.table = PgvectorSink.table(base.sink.table, removing: suffix)
            } else if kind != .pgvector, base.sink.collection.hasSuffix(suffix) {
                base.sink.collection.removeLast(suffix.count)
            }
        }
        base.generation = nil
        self.base = base
    }

    var kind: PipelineConfiguration.Sink.Kind { base.sink.kind }

    /// The table (pgvector), collection or JSONL path of the original generation's.
    var baseName: String {
        switch kind {
        case .pgvector: base.sink.table
        case .jsonl: base.sink.path
        case .pinecone: base.sink.namespace
        default: base.sink.collection
        }
    }

    /// The table, collection or JSONL path of `generation`.
    func name(of generation: String) -> String {
        if kind == .jsonl { return JSONLGenerationLink.adding(generation, to: baseName) }
        if kind == .pinecone, baseName.isEmpty { return generation == GenerationManifest.original ? "" : generation }
        guard generation != GenerationManifest.original else { return baseName }
        return kind == .pgvector ? PgvectorSink.table(baseName, adding: "_" + generation) : "\(baseName)_\(generation)"
    }

    /// The name outside readers query, which always shows the active generation: the view (pgvector), the
    /// collection alias (Qdrant) or the symbolic link (JSONL); nil where the store has none (Chroma: readers
    /// follow the manifest).
    var stableName: String? {
        switch kind {
        case .chroma, .pinecone: nil
        case .jsonl: JSONLGenerationLink.adding("active", to: baseName)
        case .pgvector: PgvectorSink.table(baseName, adding: "_active")
        default: "\(baseName)_active"
        }
    }

    /// Points `configuration` at `generation`'s table, collection or files.
    func point(_ configuration: inout PipelineConfiguration, at generation: String) {
        switch kind {
        case .pgvector: configuration.sink.table = name(of: generation)
        case .jsonl: configuration.sink.path = name(of: generation)
        case .pinecone: configuration.sink.namespace = name(of: generation)
        default: configuration.sink.collection = name(of: generation)
        }
    }

    /// Where `generation` is, as `sluice generation status` shows it.
    func location(of generation: String) -> String {
        switch kind {
        case .pgvector: "table " + name(of: generation)
        case .jsonl: "file " + base.resolve(name(of: generation)).path
        case .pinecone:
            "index \(base.sink.index ?? "") namespace "
                + (name(of: generation).isEmpty ? "(default)" : name(of: generation))
        default: "collection " + name(of: generation)
        }
    }

    /// The bytes of `generation`'s files when they are on this machine (JSONL); nil for a store behind a
    /// server.
    func localBytes(of generation: String) -> Int? {
        kind == .jsonl ? JSONLGenerationLink.bytes(of: base.resolve(name(of: generation))) : nil
    }

    /// What `generation` takes in its store, as the store can tell it: the files' bytes (JSONL), the table's
    /// with its indexes (pgvector, `pg_total_relation_size`), or, where the server reports no size (Qdrant,
    /// Chroma, Pinecone), an estimate of the vectors alone: count × dimensions × 4 bytes (float32), payload
    /// and index not counted. Nil when its table, collection or namespace does not exist yet.
    func size(of generation: String) async throws -> GenerationReport.Size? {
        if let bytes = localBytes(of: generation) { return GenerationReport.Size(bytes: bytes, estimated: false) }
        let sink = try sink(of: generation)
        if let table = sink as? PgvectorSink {
            return try await table.totalRelationSize().map { GenerationReport.Size(bytes: $0, estimated: false) }
        }
        let info = try await sink.info()
        guard info.exists, info.count > 0, let dimensions = info.dimensions else { return nil }
        return GenerationReport.Size(bytes: info.count * dimensions * 4, estimated: true)
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
        if kind == .jsonl {
            return try JSONLGenerationLink.publish(
                base.resolve(stableName),
                to: base.resolve(name(of: active))
            )
        }
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

    /// Deletes the tables, collections or files of `generations` (those that do not exist are skipped).
    func delete(_ generations: [String]) async throws {
        for generation in generations {
            try await sink(of: generation).drop()
            // A JSONL folder of shards is left empty by the store's drop.
            if kind == .jsonl { _ = rmdir(base.resolve(name(of: generation)).path) }
        }
    }
}
