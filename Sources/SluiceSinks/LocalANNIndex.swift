import CHNSW
import Foundation
import SluiceCore
import Synchronization

/// The local store's approximate nearest-neighbour index, keyed by 64-bit labels that the store maps to vector
/// ids (``LocalSink``'s `ann` databases): hnswlib's graph held in memory (`sink.hnsw.nodes: memory`), or our
/// own graph whose bottom-layer nodes live in a file read with `pread` (`file`; `CHNSW`'s `sluice_fgraph_*`,
/// docs/LOCAL_INDEX.md). Both answer the same methods.
///
/// Safe to use from several threads: searches run side by side, writes one at a time (the C side locks).
/// Every call blocks: callers run it on a ``BlockingExecutor``.
final class LocalANNIndex: @unchecked Sendable {
    /// The implementation behind a handle, owned; freed in deinit only. Thread safety is the C side's lock.
    private enum Handle {
        case memory(OpaquePointer)
        case file(OpaquePointer)
    }

    private let handle: Handle
    let dimensions: Int
    /// Counts each write's start and end (odd while one runs), so that a reader can tell whether the graph
    /// changed while it read (``bounds(_:capacity:)``).
    private let mutations = Atomic<Int>(0)

    private init(handle: Handle, dimensions: Int) {
        self.handle = handle
        self.dimensions = dimensions
    }

    deinit {
        switch handle {
        case .memory(let graph): sluice_hnsw_free(graph)
        case .file(let graph): sluice_fgraph_free(graph)
        }
    }

    /// Where this graph's nodes live.
    var nodes: PipelineConfiguration.Sink.HNSW.Nodes {
        switch handle {
        case .memory: .memory
        case .file: .file
        }
    }

    /// A new, empty index of the kind `settings.nodes` says; a graph with its nodes in a file works in an
    /// unnamed file of `directory` (required for it).
    convenience init(dimensions: Int, capacity: Int, settings: LocalSink.IndexSettings, directory: URL? = nil) throws {
        switch settings.nodes {
        case .memory:
            let graph = try Self.call("cannot create the index") { error, size in
                sluice_hnsw_create(dimensions, capacity, settings.m, settings.efConstruction, error, size)
            }
            self.init(handle: .memory(graph), dimensions: dimensions)
        case .file:
            guard let directory else {
                throw SluiceError(.sinkFailed, "a graph with its nodes in a file needs a folder")
            }
            let graph = try Self.call("cannot create the index") { error, size in
                sluice_fgraph_create(
                    directory.path,
                    dimensions,
                    capacity,
                    settings.m,
                    settings.efConstruction,
                    settings.fileCodeBytes,
                    settings.fileCodesFrom,
                    error,
                    size
                )
            }
            sluice_fgraph_set_resident_bytes(graph, settings.fileResidentBytes)
            self.init(handle: .file(graph), dimensions: dimensions)
        }
    }

    /// The index saved at `file`, of the kind `settings.nodes` says (the file name tells them apart:
    /// ``LocalSink/indexFile(generation:)``).
    /// - Throws: when the file is damaged, cut short, made for another dimension or of the other kind.
    convenience init(loading file: URL, dimensions: Int, settings: LocalSink.IndexSettings = .init()) throws {
        switch settings.nodes {
        case .memory:
            let graph = try Self.call("cannot load \(file.lastPathComponent)") { error, size in
                sluice_hnsw_load(file.path, dimensions, error, size)
            }
            self.init(handle: .memory(graph), dimensions: dimensions)
        case .file:
            let graph = try Self.call("cannot load \(file.lastPathComponent)") { error, size in
                sluice_fgraph_load(file.path, dimensions, settings.efConstruction, error, size)
            }
            // Loaded with the default budget (a small graph's records read then); another budget is set after.
            if settings.fileResidentBytes != LocalSink.IndexSettings.defaultFileResidentBytes {
                sluice_fgraph_set_resident_bytes(graph, settings.fileResidentBytes)
            }
            self.init(handle: .file(graph), dimensions: dimensions)
        }
    }

    /// Writes the index to `file` (not yet durable: the caller syncs and renames).
    func save(to file: URL) throws {
        try Self.check("cannot save the index to \(file.path)") { error, size in
            switch handle {
            case .memory(let graph): sluice_hnsw_save(graph, file.path, error, size)
            case .file(let graph): sluice_fgraph_save(graph, file.path, error, size)
            }
        }
    }

    /// Adds or replaces vectors (each `dimensions` long) under their labels, with up to `threads` threads.
    func add(_ entries: [(label: UInt64, vector: [Float])], threads: Int) throws {
        guard !entries.isEmpty else { return }
        var flat = [Float]()
        flat.reserveCapacity(entries.count * dimensions)
        for entry in entries {
            guard entry.vector.count == dimensions else {
                throw SluiceError(
                    .sinkFailed,
                    "a vector of \(entry.vector.count) dimensions for an index of \(dimensions)"
                )
            }
            flat += entry.vector
        }
        let labels = entries.map(\.label)
        mutations.add(1, ordering: .sequentiallyConsistent)
        defer { mutations.add(1, ordering: .sequentiallyConsistent) }
        try Self.check("cannot add to the index") { error, size in
            switch handle {
            case .memory(let graph):
                sluice_hnsw_add(graph, flat, labels, entries.count, max(1, threads), error, size)
            case .file(let graph):
                sluice_fgraph_add(graph, flat, labels, entries.count, max(1, threads), error, size)
            }
        }
    }

    /// Marks a label deleted; returns whether it was there (and not yet deleted).
    /// - Throws: when a graph with its nodes in a file cannot write the tombstone.
    @discardableResult
    func markDeleted(_ label: UInt64) throws -> Bool {
        mutations.add(1, ordering: .sequentiallyConsistent)
        defer { mutations.add(1, ordering: .sequentiallyConsistent) }
        switch handle {
        case .memory(let graph):
            return sluice_hnsw_mark_deleted(graph, label) == 1
        case .file(let graph):
            var error = [CChar](repeating: 0, count: 256)
            let result = error.withUnsafeMutableBufferPointer {
                sluice_fgraph_mark_deleted(graph, label, $0.baseAddress!, $0.count)
            }
            guard result >= 0 else {
                throw SluiceError(.sinkFailed, "cannot delete from the index: \(Self.message(error))")
            }
            return result == 1
        }
    }

    /// How many labels to ask the graph for when a search wants the best `k`. The graph holds its vectors
    /// quantized to 8 bits (`CHNSW`), so its order among near-equal neighbours is approximate: the caller
    /// asks for more and ranks them again by the stored vectors.
    static func candidates(for k: Int) -> Int { k + max(k, 8) }

    /// The up to `k` nearest labels, nearest first, with their cosine similarity as the graph's quantized
    /// vectors give it (within about 0.01 of the exact one), from a search keeping `breadth` candidates
    /// (hnswlib's `ef`; at least `k`).
    func search(_ query: [Float], k: Int, breadth: Int) -> [(label: UInt64, similarity: Float)] {
        guard k > 0, query.count == dimensions else { return [] }
        var labels = [UInt64](repeating: 0, count: k)
        var similarities = [Float](repeating: 0, count: k)
        let found =
            switch handle {
            case .memory(let graph): sluice_hnsw_search(graph, query, k, max(1, breadth), &labels, &similarities)
            case .file(let graph): sluice_fgraph_search(graph, query, k, max(1, breadth), &labels, &similarities)
            }
        return (0..<found).map { (labels[$0], similarities[$0]) }
    }

    /// How many writes began and ended so far: even when none is under way; equal before and after a read that
    /// no write overlapped.
    var mutationCount: Int { mutations.load(ordering: .sequentiallyConsistent) }

    /// For an exact search that reads records: the `capacity` labels (not deleted) whose upper bounds on their
    /// cosine to `query` are highest, highest first, with the bounds — no true cosine of a label's vector as the
    /// graph holds it exceeds its bound (`sluice_hnsw_bounds`). Nil for a graph with its nodes in a file, which
    /// holds no vectors in memory (only codes, whose error has no such bound). With `mask`, only the labels it
    /// allows (every label's bound computed all the same: `LocalAccessLabels`).
    func bounds(
        _ query: [Float],
        capacity: Int,
        mask: LocalAccessLabels.Mask? = nil
    ) -> (
        labels: [UInt64], bounds: [Float]
    )? {
        guard case .memory(let graph) = handle, query.count == dimensions, capacity > 0 else { return nil }
        var labels = [UInt64](repeating: 0, count: capacity)
        var bounds = [Float](repeating: 0, count: capacity)
        let written: Int
        if let mask {
            written = mask.valueOfLabel.withUnsafeBufferPointer { values in
                mask.allowed.withUnsafeBufferPointer { allowed in
                    sluice_hnsw_bounds(
                        graph,
                        query,
                        capacity,
                        values.baseAddress,
                        values.count,
                        allowed.baseAddress,
                        allowed.count,
                        &labels,
                        &bounds
                    )
                }
            }
        } else {
            written = sluice_hnsw_bounds(graph, query, capacity, nil, 0, nil, 0, &labels, &bounds)
        }
        labels.removeSubrange(written...)
        bounds.removeSubrange(written...)
        return (labels, bounds)
    }

    /// Elements in the graph, deleted ones included.
    var elementCount: Int {
        switch handle {
        case .memory(let graph): sluice_hnsw_element_count(graph)
        case .file(let graph): sluice_fgraph_element_count(graph)
        }
    }
    var deletedCount: Int {
        switch handle {
        case .memory(let graph): sluice_hnsw_deleted_count(graph)
        case .file(let graph): sluice_fgraph_deleted_count(graph)
        }
    }
    /// Element slots reserved, used or not (the index grows by an eighth when full, not by doubling).
    var capacity: Int {
        switch handle {
        case .memory(let graph): sluice_hnsw_capacity(graph)
        case .file(let graph): sluice_fgraph_capacity(graph)
        }
    }
    /// Bytes of each label's product-quantized code once a graph with its nodes in a file has trained its
    /// codebooks (its searches then read only the nodes they expand); 0 before, and for the graph in memory.
    var codeBytes: Int {
        switch handle {
        case .memory: 0
        case .file(let graph): sluice_fgraph_code_bytes(graph)
        }
    }

    /// The code bytes of the graph with its nodes in a file saved at `file` once its codes are trained, 0 before,
    /// nil when it cannot be read (its header alone: `sluice status` does not load it).
    static func savedCodeBytes(_ file: URL) -> Int? {
        let bytes = sluice_fgraph_saved_code_bytes(file.path)
        return bytes < 0 ? nil : bytes
    }

    /// Bytes the index holds in memory (an estimate within a few percent; a file's pages are not counted).
    var memoryBytes: Int {
        switch handle {
        case .memory(let graph): sluice_hnsw_memory_bytes(graph)
        case .file(let graph): sluice_fgraph_memory_bytes(graph)
        }
    }

    private static func call(
        _ what: String,
        _ body: (UnsafeMutablePointer<CChar>, Int) -> OpaquePointer?
    ) throws -> OpaquePointer {
        var error = [CChar](repeating: 0, count: 256)
        let result = error.withUnsafeMutableBufferPointer { body($0.baseAddress!, $0.count) }
        guard let result else { throw SluiceError(.sinkFailed, "\(what): \(message(error))") }
        return result
    }

    private static func check(_ what: String, _ body: (UnsafeMutablePointer<CChar>, Int) -> Int32) throws {
        var error = [CChar](repeating: 0, count: 256)
        let ok = error.withUnsafeMutableBufferPointer { body($0.baseAddress!, $0.count) }
        guard ok == 1 else { throw SluiceError(.sinkFailed, "\(what): \(message(error))") }
    }

    private static func message(_ buffer: [CChar]) -> String {
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
