import CMiniLMKernels

/// A worker's buffer of activations quantized for the int8 path: each row as uint8 with its scale and
/// offset (row ≈ scale · values + offset), quantized afresh before every dense product.
final class MiniLMInt8Activations {
    private(set) var values: UnsafeMutablePointer<UInt8>
    private(set) var scales: UnsafeMutablePointer<Float>
    private(set) var offsets: UnsafeMutablePointer<Float>
    private var valueCapacity = 0
    private var rowCapacity = 0

    init() {
        values = .allocate(capacity: 1)
        scales = .allocate(capacity: 1)
        offsets = .allocate(capacity: 1)
    }

    deinit {
        values.deallocate()
        scales.deallocate()
        offsets.deallocate()
    }

    /// Quantizes `count` rows of `width` floats (row stride `stride`), replacing what the buffer held.
    func quantize(_ rows: UnsafePointer<Float>, count: Int, width: Int, stride: Int) {
        if count * width > valueCapacity {
            values.deallocate()
            valueCapacity = count * width
            values = .allocate(capacity: valueCapacity)
        }
        if count > rowCapacity {
            scales.deallocate()
            offsets.deallocate()
            rowCapacity = count
            scales = .allocate(capacity: count)
            offsets = .allocate(capacity: count)
        }
        sluice_minilm_int8_quantize_rows(rows, Int32(count), Int32(width), Int32(stride), values, scales, offsets)
    }
}
