import CHNSW

/// The vectors k-means trains on (``LocalIVFTraining``), held as the store's 8-bit codes (`sluice_ivf_encode`:
/// a float scale, then one signed byte a dimension, of the L2-normalized vector; 388 bytes for 384 dimensions,
/// a quarter of the floats) in one buffer allocated for the whole sample up front, never grown; k-means
/// decodes them a block at a time (``decode(_:into:)``).
struct LocalIVFSample {
    /// Dimensions of every vector.
    let dimensions: Int
    /// Bytes of one code.
    let codeBytes: Int
    /// Vectors held, the first of ``capacity``.
    private(set) var count = 0
    private var codes: [UInt8]

    /// An empty sample with room for `capacity` vectors of `dimensions`.
    init(capacity: Int, dimensions: Int) {
        self.dimensions = dimensions
        codeBytes = sluice_ivf_code_bytes(dimensions)
        codes = [UInt8](repeating: 0, count: max(0, capacity) * codeBytes)
    }

    /// The most vectors it holds.
    var capacity: Int { codes.count / codeBytes }

    /// The bytes its buffer holds.
    var bytes: Int { codes.count }

    /// Adds `vector` (of ``dimensions``) after the others; there must be room.
    mutating func append(_ vector: [Float]) {
        precondition(count < capacity, "the sample is full")
        encode(vector, at: count)
        count += 1
    }

    /// Puts `vector` (of ``dimensions``) in the place of the one at `slot`.
    mutating func replace(_ slot: Int, with vector: [Float]) {
        precondition(slot < count, "no vector at \(slot)")
        encode(vector, at: slot)
    }

    private mutating func encode(_ vector: [Float], at slot: Int) {
        let (dimensions, offset) = (dimensions, slot * codeBytes)
        codes.withUnsafeMutableBufferPointer { codes in
            vector.withUnsafeBufferPointer {
                sluice_ivf_encode($0.baseAddress, dimensions, codes.baseAddress! + offset)
            }
        }
    }

    /// The vectors at `slots` decoded into `vectors` (flat, row after row, replacing what it held): unit
    /// vectors up to the codes' rounding.
    func decode(_ slots: Range<Int>, into vectors: inout [Float]) {
        precondition(slots.upperBound <= count, "no vectors at \(slots)")
        let (dimensions, offset) = (dimensions, slots.lowerBound * codeBytes)
        let floats = slots.count * dimensions
        if vectors.count != floats { vectors = [Float](repeating: 0, count: floats) }
        codes.withUnsafeBufferPointer { codes in
            vectors.withUnsafeMutableBufferPointer {
                sluice_ivf_decode(codes.baseAddress! + offset, slots.count, dimensions, $0.baseAddress)
            }
        }
    }
}
