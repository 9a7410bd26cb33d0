import Foundation
import SluiceCore

/// The local store's value layout: `[UInt32 dimension][dimension × Float32][JSON of the rest]`, so that
/// search reads vectors without decoding JSON.
extension LocalSink {
    private struct Stored: Codable {
        var key: String
        var ordinal: Int
        var text: String
        var metadata: [String: MetadataValue]
    }

    /// The record's stored value. `encoder` may be shared by a batch's records (one encoder each cost more
    /// than the encoding of a short record).
    static func encode(_ record: VectorRecord, encoder: JSONEncoder = JSONEncoder()) throws -> [UInt8] {
        let json = try encoder.encode(
            Stored(key: record.documentKey, ordinal: record.ordinal, text: record.text, metadata: record.metadata)
        )
        var out = [UInt8]()
        out.reserveCapacity(4 + record.vector.count * 4 + json.count)
        var dimension = UInt32(record.vector.count).littleEndian
        withUnsafeBytes(of: &dimension) { out += $0 }
        record.vector.withUnsafeBytes { out += $0 }
        out += json
        return out
    }

    package static func decode<Bytes: Collection>(id: [UInt8], _ bytes: Bytes) throws -> VectorRecord
    where Bytes.Element == UInt8 {
        let array = Array(bytes)
        guard array.count >= 4 else { throw SluiceError(.sinkFailed, "corrupt record in local store") }
        let dimension = array.withUnsafeBytes { Int(UInt32(littleEndian: $0.loadUnaligned(as: UInt32.self))) }
        let vectorEnd = 4 + dimension * 4
        guard array.count >= vectorEnd else { throw SluiceError(.sinkFailed, "corrupt record in local store") }
        let vector = array[4..<vectorEnd].withUnsafeBytes { raw in
            (0..<dimension).map { raw.loadUnaligned(fromByteOffset: $0 * 4, as: Float.self) }
        }
        let stored = try JSONDecoder().decode(Stored.self, from: Data(array[vectorEnd...]))
        return VectorRecord(
            id: VectorID(rawValue: String(decoding: id, as: UTF8.self)),
            documentKey: stored.key,
            ordinal: stored.ordinal,
            text: stored.text,
            vector: vector,
            metadata: stored.metadata
        )
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
