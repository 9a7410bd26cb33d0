import Foundation
import SluiceCore

/// The local store's value layout: `[UInt32 dimension][dimension × Float32][the rest]`, so that search reads
/// vectors without decoding the rest; the rest (document key, ordinal, text, metadata) is in the binary
/// layout, or, in a store written before it, JSON (`LocalRecordLayout.swift`).
extension LocalSink {
    /// The record's stored value, in the binary layout.
    package static func encode(_ record: VectorRecord) -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(
            4 + record.vector.count * 4 + 24 + record.documentKey.utf8.count + record.text.utf8.count
                + record.metadata.count * 48
        )
        appendVector(record, to: &out)
        LocalRecordLayout.appendBinary(record, to: &out)
        return out
    }

    /// The record's stored value in the JSON layout that stores written before the binary one hold (for
    /// tests of reading such stores).
    static func encodeJSON(_ record: VectorRecord) throws -> [UInt8] {
        var out = [UInt8]()
        appendVector(record, to: &out)
        out += try LocalRecordLayout.json(record)
        return out
    }

    private static func appendVector(_ record: VectorRecord, to out: inout [UInt8]) {
        var dimension = UInt32(record.vector.count).littleEndian
        withUnsafeBytes(of: &dimension) { out += $0 }
        record.vector.withUnsafeBytes { out += $0 }
    }

    /// The record stored under `id`.
    /// - Throws: `sinkFailed` naming the record when its bytes are not as written (cut short, a dimension
    ///   past the end, or fields that do not decode: ``LocalRecordLayout``).
    package static func decode<Bytes: Collection>(id: [UInt8], _ bytes: Bytes) throws -> VectorRecord
    where Bytes.Element == UInt8 {
        let array = Array(bytes)
        let name = String(decoding: id, as: UTF8.self)
        guard array.count >= 4 else { throw LocalRecordLayout.corrupt(name, "\(array.count) bytes") }
        let dimension = array.withUnsafeBytes { Int(UInt32(littleEndian: $0.loadUnaligned(as: UInt32.self))) }
        let vectorEnd = 4 + dimension * 4
        guard array.count >= vectorEnd else {
            throw LocalRecordLayout.corrupt(name, "a vector of \(dimension) dimensions in \(array.count) bytes")
        }
        return try array.withUnsafeBytes { raw in
            let vector = (0..<dimension).map { raw.loadUnaligned(fromByteOffset: 4 + $0 * 4, as: Float.self) }
            let fields = try LocalRecordLayout.decode(
                UnsafeRawBufferPointer(rebasing: raw[vectorEnd...]),
                record: name
            )
            return VectorRecord(
                id: VectorID(rawValue: name),
                documentKey: fields.key,
                ordinal: fields.ordinal,
                text: fields.text,
                vector: vector,
                metadata: fields.metadata
            )
        }
    }

    static func norm(_ v: [Float]) -> Float {
        var sum: Float = 0
        for x in v { sum += x * x }
        return sum.squareRoot()
    }

    /// Cosine between `query` and the vector at the front of an encoded record.
    static func cosine(_ query: [Float], queryNorm: Float, encoded: UnsafeRawBufferPointer) -> Float {
        guard encoded.count >= 4 else { return -1 }
        let dimension = Int(UInt32(littleEndian: encoded.loadUnaligned(as: UInt32.self)))
        guard dimension == query.count, encoded.count >= 4 + dimension * 4 else { return -1 }
        var dot: Float = 0
        var norm: Float = 0
        for i in 0..<dimension {
            let x = encoded.loadUnaligned(fromByteOffset: 4 + i * 4, as: Float.self)
            dot += x * query[i]
            norm += x * x
        }
        guard norm > 0 else { return 0 }
        return dot / (norm.squareRoot() * queryNorm)
    }
}
