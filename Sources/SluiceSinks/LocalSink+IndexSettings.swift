import Foundation
import SluiceCore

extension LocalSink {
    /// How the local store answers searches: an exact scan of every vector, or an HNSW graph (hnswlib)
    /// kept beside the data and updated by the same upserts and deletes.
    public struct IndexSettings: Sendable, Hashable {
        public var kind: PipelineConfiguration.Sink.LocalIndex
        /// Graph degree (hnswlib's `M`): neighbours per node, twice that on the bottom layer.
        public var m: Int
        /// Candidates considered while inserting (hnswlib's `ef_construction`).
        public var efConstruction: Int
        /// Candidates considered while searching (hnswlib's `ef`; at least `k` is used); nil: chosen by the
        /// store's size (``searchBreadth(vectors:)``).
        public var efSearch: Int?
        /// Searches scan while the store holds fewer vectors than this.
        public var exactBelow: Int
        /// Threads that insert at once (rebuilds and upserts).
        public var buildThreads: Int

        /// The pipeline's `sink.local_index` and `sink.hnsw.*`.
        public init(section: PipelineConfiguration.Sink = .init()) {
            kind = section.localIndex
            m = section.hnsw.m
            efConstruction = section.hnsw.efConstruction
            efSearch = section.hnsw.efSearch
            exactBelow = section.hnsw.exactBelow
            buildThreads = max(1, ProcessInfo.processInfo.activeProcessorCount)
        }

        /// The breadth of a search in a store of `vectors` vectors: `ef_search` when the pipeline sets it;
        /// otherwise (`auto`) 64 up to ``breadthGrowsFrom`` vectors, then growing with the square root
        /// of the size (an HNSW graph's recall at a fixed breadth falls as it grows), at most 1,024. Measured
        /// on clustered 384-d vectors (docs/BENCHMARKS.md, the local search benchmark).
        public func searchBreadth(vectors: Int) -> Int {
            if let efSearch { return efSearch }
            guard vectors > Self.breadthGrowsFrom else { return 64 }
            let grown = 64 * (Double(vectors) / Double(Self.breadthGrowsFrom)).squareRoot()
            return min(1024, Int(grown.rounded(.up)))
        }

        /// Past this many vectors, `auto` widens searches.
        public static let breadthGrowsFrom = 250_000
    }
}
