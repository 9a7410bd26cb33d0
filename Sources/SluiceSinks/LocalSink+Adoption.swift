import Foundation
import SluiceCore
import SluiceLMDB

/// Reading vectors back for a new or lost state (``VectorSink/storedVectors(ofDocument:)``): records are keyed
/// by id alone, so the first call scans the store once for the document keys (``DocumentKeyIndex``), and
/// each call then reads its document's records by id. A record that does not decode is not adopted (its chunk is
/// embedded again, and its upsert writes the record anew): it is skipped, and named in ``readNotice``.
extension LocalSink {
    public func storedVectors(ofDocument key: String) async throws -> [VectorID: [Float]]? {
        let environment = self.environment
        let documentKeys = self.documentKeys
        let unreadable = self.unreadable
        return try await readers.run {
            let vectors = try environment.database("vectors")
            let ids = try documentKeys.ids(of: key) { add in
                try environment.read { txn in
                    try txn.forEach(vectors) { id, value in
                        guard let key = try unreadable.documentKey(id: Array(id), value) else { return true }
                        add(VectorID(rawValue: String(decoding: id, as: UTF8.self)), key)
                        return true
                    }
                }
            }
            guard !ids.isEmpty else { return [:] }
            return try environment.read { txn in
                var out: [VectorID: [Float]] = [:]
                for id in ids {
                    guard let value = try txn.get(vectors, Array(id.rawValue.utf8)),
                        let record = try unreadable.record(id: Array(id.rawValue.utf8), value)
                    else { continue }
                    out[id] = record.vector
                }
                return out
            }
        }
    }

    /// The document key of an encoded record (`[UInt32 dimension][vector][fields]`, either layout).
    static func documentKey<Bytes: Collection>(_ bytes: Bytes, record: String) throws -> String
    where Bytes.Element == UInt8 {
        let array = Array(bytes)
        guard array.count >= 4 else { throw LocalRecordLayout.corrupt(record, "\(array.count) bytes") }
        let dimension = array.withUnsafeBytes { Int(UInt32(littleEndian: $0.loadUnaligned(as: UInt32.self))) }
        let vectorEnd = 4 + dimension * 4
        guard array.count >= vectorEnd else {
            throw LocalRecordLayout.corrupt(record, "a vector of \(dimension) dimensions in \(array.count) bytes")
        }
        return try array.withUnsafeBytes { raw in
            try LocalRecordLayout.documentKey(UnsafeRawBufferPointer(rebasing: raw[vectorEnd...]), record: record)
        }
    }
}
