import CHNSW
import Foundation
import SluiceCore

/// The local store's approximate nearest-neighbour index: one hnswlib graph in memory (`CHNSW`), keyed by
/// 64-bit labels that the store maps to vector ids (``LocalSink``'s `ann` databases).
///
/// Safe to use from several threads: searches run side by side, writes one at a time (the C side locks).
/// Every call blocks: callers run it on a ``BlockingExecutor``.
final class LocalANNIndex: @unchecked Sendable {
    // Owned; freed in deinit only. Thread safety is the C side's lock.
    private let handle: OpaquePointer
    let dimensions: Int

    private init(handle: OpaquePointer, dimensions: Int) {
        self.handle = handle
        self.dimensions = dimensions
    }

    deinit { sluice_hnsw_free(handle) }

    /// A new, empty index.
    convenience init(dimensions: Int, capacity: Int, settings: LocalSink.IndexSettings) throws {
        let handle = try Self.call("cannot create the index") { error, size in
            sluice_hnsw_create(dimensions, capacity, settings.m, settings.efConstruction, error, size)
        }
        self.init(handle: handle, dimensions: dimensions)
    }

    /// The index saved at `file`.
    /// - Throws: when the file is damaged, cut short or made for another dimension.
    convenience init(loading file: URL, dimensions: Int) throws {
        let handle = try Self.call("cannot load \(file.lastPathComponent)") { error, size in
            sluice_hnsw_load(file.path, dimensions, error, size)
        }
        self.init(handle: handle, dimensions: dimensions)
    }

    /// Writes the index to `file` (not yet durable: the caller syncs and renames).
    func save(to file: URL) throws {
        try Self.check("cannot save the index to \(file.path)") { error, size in
            sluice_hnsw_save(handle, file.path, error, size)
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
        try Self.check("cannot add to the index") { error, size in
            sluice_hnsw_add(handle, flat, labels, entries.count, max(1, threads), error, size)
        }
    }

    /// Marks a label deleted; returns whether it was there.
    @discardableResult
    func markDeleted(_ label: UInt64) -> Bool { sluice_hnsw_mark_deleted(handle, label) == 1 }

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
        let found = sluice_hnsw_search(handle, query, k, max(1, breadth), &labels, &similarities)
        return (0..<found).map { (labels[$0], similarities[$0]) }
    }

    /// Elements in the graph, deleted ones included.
    var elementCount: Int { sluice_hnsw_element_count(handle) }
    var deletedCount: Int { sluice_hnsw_deleted_count(handle) }
    /// Element slots reserved, used or not (the index grows by an eighth when full, not by doubling).
    var capacity: Int { sluice_hnsw_capacity(handle) }
    /// Bytes the index holds in memory (an estimate within a few percent).
    var memoryBytes: Int { sluice_hnsw_memory_bytes(handle) }

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
