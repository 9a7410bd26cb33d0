import Foundation
import SluiceCore

extension JSONLSink {
    /// One record as a line of the store, byte for byte what `JSONEncoder` with `.sortedKeys` and
    /// `.withoutEscapingSlashes` writes (and `sluice export` prints): `document_key`, `id`, `metadata`,
    /// `ordinal`, `text`, `vector`.
    ///
    /// Written by hand but for the metadata (a few small values, still through `JSONEncoder`): the text and
    /// the vector are most of a line, and `JSONEncoder` on them was 20% of the CPU of a latency-bound
    /// `sluice run` into a JSONL store (issue 19). A record with a non-finite value in its vector goes through
    /// `JSONEncoder` whole, which refuses it as before.
    static func encode(_ record: VectorRecord) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard record.vector.allSatisfy(\.isFinite) else { return try encoder.encode(record) }
        let metadata = try encoder.encode(record.metadata)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(record.text.utf8.count + metadata.count + record.vector.count * 12 + 160)
        bytes.append(contentsOf: #"{"document_key":"#.utf8)
        JSONString.append(record.documentKey, to: &bytes)
        bytes.append(contentsOf: #","id":"#.utf8)
        JSONString.append(record.id.rawValue, to: &bytes)
        bytes.append(contentsOf: #","metadata":"#.utf8)
        bytes.append(contentsOf: metadata)
        bytes.append(contentsOf: #","ordinal":"#.utf8)
        bytes.append(contentsOf: String(record.ordinal).utf8)
        bytes.append(contentsOf: #","text":"#.utf8)
        JSONString.append(record.text, to: &bytes)
        bytes.append(contentsOf: #","vector":["#.utf8)
        for (index, value) in record.vector.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            appendNumber(value, to: &bytes)
        }
        bytes.append(contentsOf: "]}".utf8)
        return Data(bytes)
    }

    /// A finite float as `JSONEncoder` writes it: its shortest round-trip description, without the `.0` of a
    /// whole number (`1`, `-0`, `0.1`, `1e-05`, `1.2345679e+08`).
    static func appendNumber(_ value: Float, to bytes: inout [UInt8]) {
        let text = value.description
        let utf8 = text.utf8
        if text.hasSuffix(".0") {
            bytes.append(contentsOf: utf8.dropLast(2))
        } else {
            bytes.append(contentsOf: utf8)
        }
    }
}
