import Foundation
import SluiceCore

extension LocalSink {
    /// How the local store answers searches: an exact scan of every vector, an HNSW graph (hnswlib) kept
    /// beside the data, or inverted lists of 8-bit codes in LMDB (IVF), both updated by the same upserts and
    /// deletes.
    public struct IndexSettings: Sendable, Hashable {
        public var kind: PipelineConfiguration.Sink.LocalIndex
        /// Graph degree (hnswlib's `M`): neighbours per node, twice that on the bottom layer.
        public var m: Int
        /// Candidates considered while inserting (hnswlib's `ef_construction`).
        public var efConstruction: Int
        /// Candidates considered while searching (hnswlib's `ef`; at least `k` is used); nil: chosen by the
        /// store's size (``searchBreadth(vectors:codesTrained:)``).
        public var efSearch: Int?
        /// Searches scan while the store holds fewer vectors than this (`sink.hnsw.exact_below` for the graph,
        /// `sink.ivf.exact_below` for IVF).
        public var exactBelow: Int
        /// IVF lists scanned a search; nil: chosen by the store's size (``probes(lists:vectors:)``).
        public var nprobe: Int?
        /// Threads that insert at once (rebuilds and upserts).
        public var buildThreads: Int
        /// Where the graph's nodes live (`sink.hnsw.nodes`): in memory (hnswlib) or in a file.
        public var nodes: PipelineConfiguration.Sink.HNSW.Nodes
        /// With the nodes in a file: bytes of each label's product-quantized code held in memory (0: none, every
        /// node a search scores is read), the graph's size at which the codebooks are trained from its own
        /// vectors (docs/LOCAL_INDEX.md, "PQ codes in the store's file graph"; earlier when that many records
        /// would not fit `fileResidentBytes`), and the bytes of records held in memory while the graph is that
        /// small (session 35: until then it searches and inserts as the graph in memory does, with no read and
        /// no codes). Not pipeline settings.
        package var fileCodeBytes = Self.defaultFileCodeBytes
        package var fileCodesFrom = Self.defaultFileCodesFrom
        package var fileResidentBytes = Self.defaultFileResidentBytes
        /// The metadata field access control restricts readers by (`access.field`), when it is on. A filtered
        /// search restricted by it reads in the order of the graph's bounds only the records its caller may read,
        /// from a table of each label's readers (`LocalAccessLabels.swift`), so that its time says nothing of the
        /// records near the query the caller may not see; a filter naming it otherwise scans every record. Not a
        /// pipeline setting of the sink.
        package var accessField: String?

        /// The pipeline's `sink.local_index` and `sink.hnsw.*`.
        public init(section: PipelineConfiguration.Sink = .init()) {
            kind = section.localIndex
            m = section.hnsw.m
            efConstruction = section.hnsw.efConstruction
            efSearch = section.hnsw.efSearch
            exactBelow = section.localIndex == .ivf ? section.ivf.exactBelow : section.hnsw.exactBelow
            nprobe = section.ivf.nprobe
            buildThreads = max(1, ProcessInfo.processInfo.activeProcessorCount)
            nodes = section.hnsw.nodes
        }

        /// The breadth of a search in a store of `vectors` vectors: `ef_search` when the pipeline sets it;
        /// otherwise (`auto`) 64 up to ``breadthGrowsFrom`` vectors, then growing with the square root
        /// of the size (an HNSW graph's recall at a fixed breadth falls as it grows), at most 1,024. Measured
        /// on clustered 384-d vectors (docs/BENCHMARKS.md, the local search benchmark). A graph with its nodes in
        /// a file whose codes are trained (`codesTrained`: past about 16,000 vectors at 384 d) ranks its
        /// candidates by product-quantized codes, which need a beam ``fileBreadthFactor`` times as broad for the
        /// same recall (measured on real MiniLM vectors and tight clusters: docs/LOCAL_INDEX.md); `auto` is that much broader
        /// there. Before its codes are trained it scores every node exactly, as the graph in memory does.
        public func searchBreadth(vectors: Int, codesTrained: Bool) -> Int {
            if let efSearch { return efSearch }
            let factor = nodes == .file && fileCodeBytes > 0 && codesTrained ? Self.fileBreadthFactor : 1
            guard vectors > Self.breadthGrowsFrom else { return Int((64 * factor).rounded(.up)) }
            let grown = 64 * (Double(vectors) / Double(Self.breadthGrowsFrom)).squareRoot()
            return Int((Double(min(1024, Int(grown.rounded(.up)))) * factor).rounded(.up))
        }

        /// ``searchBreadth(vectors:codesTrained:)`` for a graph whose codes are trained (with the nodes in a file,
        /// the broader: what this answered before session 35).
        @available(*, deprecated, message: "say whether the graph's codes are trained (codesTrained:)")
        public func searchBreadth(vectors: Int) -> Int { searchBreadth(vectors: vectors, codesTrained: true) }

        /// `auto`'s breadth times this with the nodes in a file once its codes are trained (codes choosing the
        /// path): with 96-byte codes, 1.5 gives the recall the graph in memory gives at `auto` — recall@10 0.863
        /// against 0.859–0.860 on 30,000 vectors in 10 tight clusters through the store, 0.998 against 0.997 on
        /// 7,974 real MiniLM vectors, 1.000 both on 100,000 clustered ones — where 2 (session 35) bought 0.912 on
        /// the tight clusters for ~25% more search CPU (docs/LOCAL_INDEX.md, "The file graph's breadth with
        /// 96-byte codes"). With 48-byte codes it was 2: 0.997 on the real vectors, and 0.628 on the clusters.
        public static let fileBreadthFactor = 1.5
        /// Code bytes a label with the nodes in a file (384 dimensions: 96 sub-vectors of 4). Session 35: 48 (8
        /// dimensions a byte) erred by ~3× the gap between a query's 10th and 100th neighbours inside a tight
        /// cluster, so the beam missed the true ones (30,000 vectors in 10 clusters: recall@10 0.628 at `auto`
        /// against the graph in memory's 0.864); 96 gives 0.909, at 1.1–1.4× the search CPU and 48 more bytes a
        /// label in memory (docs/LOCAL_INDEX.md, "The file graph's codes on tight clusters").
        static let defaultFileCodeBytes = 96
        /// The file graph's codebooks are trained when it first holds this many labels (or fewer: those whose
        /// records fit ``defaultFileResidentBytes``, at least 4,096; 16,131 at 384 d). Session 34 trained at
        /// 4,096: at 10,000 vectors its searches and inserts read and ranked by codes (docs/LOCAL_INDEX.md).
        static let defaultFileCodesFrom = 16_384
        /// The file graph holds its records in memory while they fit in this many bytes (and until its codes
        /// are trained): 5.2 MB at 10,000 labels of 384 d, where the graph in memory holds 8.6 MB.
        static let defaultFileResidentBytes = 8 << 20

        /// The IVF lists a search scans among `lists` in a store of `vectors` vectors: `sink.ivf.nprobe` when
        /// the pipeline sets it, else (`auto`) 64 up to ``probesGrowFrom`` vectors — recall@10 0.971 on real
        /// MiniLM vectors at nlist 2√n at 100,000 (docs/LOCAL_INDEX.md) — then growing in proportion to the
        /// store's size (at a fixed nprobe recall falls as the store grows: 0.822 at a million clustered
        /// vectors, docs/LOCAL_INDEX.md); never more than there are lists.
        public func probes(lists: Int, vectors: Int) -> Int {
            var auto = Self.autoProbes
            if vectors > Self.probesGrowFrom {
                auto = Int((Double(Self.autoProbes) * Double(vectors) / Double(Self.probesGrowFrom)).rounded(.up))
            }
            return max(1, min(lists, nprobe ?? auto))
        }

        /// `sink.ivf.nprobe: auto` up to ``probesGrowFrom`` vectors.
        public static let autoProbes = 64

        /// Past this many vectors, `auto` scans more IVF lists.
        public static let probesGrowFrom = 250_000

        /// Past this many vectors, `auto` widens searches.
        public static let breadthGrowsFrom = 250_000
    }
}
