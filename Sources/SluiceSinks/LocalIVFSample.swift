import CHNSW
import SluiceLMDB

/// The vectors k-means trains on (``LocalIVFTraining``), held as the sampled records' labels only (8 bytes a
/// vector, in one buffer allocated for the whole sample up front): each k-means round reads their vectors
/// from the store a block at a time (``read(_:into:)``), so what the training holds does not grow with the
/// vectors' dimensions (a code sample of 412 lists × 64 vectors held 10.2 MB at 384 dimensions, labels
/// 0.2 MB; docs/BENCHMARKS.md, "Flat memory with the default index").
///
/// A vector is read as the lists hold it: through the store's 8-bit code (`sluice_ivf_encode`, then
/// `sluice_ivf_decode`: a unit vector up to the code's rounding), which is what a code sample held in
/// memory gave, so the same store trains the same centroids as it did then.
struct LocalIVFSample {
    /// Dimensions of every vector.
    let dimensions: Int
    /// The sampled records' labels (`ann`'s `label/…` keys), the first of ``capacity``.
    private var labels: [UInt64]
    /// The most labels it holds.
    let capacity: Int
    private let environment: LMDBEnvironment

    /// An empty sample with room for `capacity` labels of records of `dimensions`, read from `environment`.
    init(capacity: Int, dimensions: Int, environment: LMDBEnvironment) {
        self.dimensions = dimensions
        self.capacity = max(0, capacity)
        self.environment = environment
        labels = []
        labels.reserveCapacity(self.capacity)
    }

    /// Labels held, the first of ``capacity``.
    var count: Int { labels.count }

    /// The bytes its buffer holds.
    var bytes: Int { capacity * MemoryLayout<UInt64>.stride }

    /// Adds the record labelled `label` after the others; there must be room.
    mutating func append(_ label: UInt64) {
        precondition(count < capacity, "the sample is full")
        labels.append(label)
    }

    /// Puts the record labelled `label` in the place of the one at `slot`.
    mutating func replace(_ slot: Int, with label: UInt64) {
        precondition(slot < count, "no vector at \(slot)")
        labels[slot] = label
    }

    /// The vectors of the records at `slots`, read from the store in one read transaction and decoded into
    /// `vectors` (flat, row after row, replacing what it held): unit vectors up to the codes' rounding, in
    /// slot order. A label no longer a record's, or a record of other dimensions, is skipped (written since
    /// the sample was taken). Returns the rows read.
    func read(_ slots: Range<Int>, into vectors: inout [Float]) throws -> Int {
        precondition(slots.upperBound <= count, "no vectors at \(slots)")
        let (ann, stored) = (try environment.database("ann"), try environment.database("vectors"))
        let dimensions = dimensions
        if vectors.count != slots.count * dimensions {
            vectors = [Float](repeating: 0, count: slots.count * dimensions)
        }
        var code = [UInt8](repeating: 0, count: sluice_ivf_code_bytes(dimensions))
        var rows = 0
        try environment.read { txn in
            for slot in slots {
                guard let id = try txn.get(ann, LocalSink.ANNKey.labelPrefix + LocalSink.bytes(labels[slot])),
                    let value = try txn.get(stored, id),
                    let vector = value.withUnsafeBytes(LocalSink.vector(encoded:)),
                    vector.count == dimensions
                else { continue }
                code.withUnsafeMutableBufferPointer { code in
                    vector.withUnsafeBufferPointer { sluice_ivf_encode($0.baseAddress, dimensions, code.baseAddress) }
                    vectors.withUnsafeMutableBufferPointer {
                        sluice_ivf_decode(code.baseAddress, 1, dimensions, $0.baseAddress! + rows * dimensions)
                    }
                }
                rows += 1
            }
        }
        return rows
    }
}
