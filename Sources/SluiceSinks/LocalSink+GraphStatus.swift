import Foundation
import SluiceCore
import SluiceLMDB

/// What `sluice status`, `sluice check` and `sluice serve`'s `/ready` say of the `hnsw` index: where the
/// graph's nodes live and whether searches use a graph or still scan (docs/LOCAL_INDEX.md, "The graph's life
/// cycle"). Read from the store and from this process's graph: a `sluice status` beside a running load sees
/// what the load has saved, the load itself (and `serve`, once it has loaded one) its graph in memory.
extension LocalSink {
    /// Where the graph stands (`hnsw_graph`).
    enum GraphStatus: String {
        /// Searches use a graph: one in this process's memory, or one saved that the change log brings to the
        /// store's generation (a reader loads it at its first search).
        case built
        /// Searches scan while this process builds the graph from a snapshot (beside a load's writes).
        case building
        /// Searches scan: the store holds `exact_below` vectors or more and no usable graph is saved; the next
        /// writer builds it (a run's start, or a write at twice `exact_below`), and its end saves it.
        case pending
        /// Searches scan: the store holds fewer than `exact_below` vectors, so no graph is built.
        case belowExactBelow = "below_exact_below"
    }

    /// `hnsw_nodes` (`memory` or `file`), `hnsw_graph` (``GraphStatus``), `hnsw_exact_below` and, for a graph
    /// known by its generation, `hnsw_graph_generation`, `hnsw_graph_behind` (the writes since it, which
    /// searches take from the change log) and `hnsw_ef_search` (the breadth its searches use); empty for
    /// another index.
    func graphDetails() throws -> [String: String] {
        guard indexSettings.kind == .hnsw else { return [:] }
        var details = [
            "hnsw_nodes": indexSettings.nodes.rawValue,
            "hnsw_exact_below": String(indexSettings.exactBelow),
        ]
        let vectors = try environment.existingDatabase("vectors")
        let ann = try environment.existingDatabase("ann")
        let (generation, count) = try environment.read { txn in
            (
                try ann.flatMap { try txn.get($0, ANNKey.generation) }.map(Self.number) ?? 0,
                try vectors.map { try txn.count($0) } ?? 0
            )
        }
        let graph: (status: GraphStatus, generation: UInt64?)
        if count < indexSettings.exactBelow {
            graph = (.belowExactBelow, nil)
        } else if let live = annState.live, live.index != nil {
            graph = (.built, live.generation)
        } else if builder.isRunning {
            graph = (.building, nil)
        } else if ann != nil, let saved = try usableSavedGraph(generation: generation) {
            graph = (.built, saved)
        } else {
            graph = (.pending, nil)
        }
        details["hnsw_graph"] = graph.status.rawValue
        if let built = graph.generation {
            details["hnsw_graph_generation"] = String(built)
            details["hnsw_graph_behind"] = String(generation >= built ? generation - built : 0)
            details["hnsw_ef_search"] = String(searchBreadth(vectors: count, savedGeneration: built))
        }
        return details
    }

    /// `hnsw_ef_search`: the breadth a search of the built graph uses — fixed, or `auto`'s for the store's
    /// size and, with the nodes in a file, whether the graph's codes are trained (the graph in this process's
    /// memory, else the saved graph's header).
    private func searchBreadth(vectors: Int, savedGeneration: UInt64) -> Int {
        if let index = annState.live?.index { return searchBreadth(vectors: vectors, index: index) }
        let trained =
            indexSettings.nodes == .file
            && (LocalANNIndex.savedCodeBytes(indexFile(generation: savedGeneration)) ?? 0) > 0
        return annState.breadth ?? indexSettings.searchBreadth(vectors: vectors, codesTrained: trained)
    }

    /// The generation of the newest saved graph of this store's kind (`sink.hnsw.nodes`) that searches can use
    /// at `generation`: its own, or an older one the change log covers. Names and the log only: the file is
    /// not loaded (a damaged one is found at its load, and searches then scan).
    func usableSavedGraph(generation: UInt64) throws -> UInt64? {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path) else { return nil }
        let saved = names.compactMap { Self.savedGeneration($0, nodes: indexSettings.nodes) }
            .filter { $0 <= generation }.max()
        guard let saved else { return nil }
        if saved == generation { return saved }
        let log = LocalANNChangeLog(environment: environment)
        return try environment.read { try log.covers(after: saved, through: generation, $0) } ? saved : nil
    }
}
