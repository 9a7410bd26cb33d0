import Foundation
import SluiceCore

extension JSONLSink {
    /// One record as a line of the store, byte for byte what `JSONEncoder` with `.sortedKeys` and
    /// `.withoutEscapingSlashes` writes (and `sluice export` prints): `document_key`, `id`, `metadata`,
    /// `ordinal`, `text`, `vector`.
    ///
    /// `JSONEncoder` on these lines was 20% of the CPU of a latency-bound `sluice run` into a JSONL store
    /// (issue 19). A record with a non-finite number (in its vector or a metadata value) goes through
    /// `JSONEncoder` whole, which refuses it as before.
    static func encode(_ record: VectorRecord) throws -> Data {
        guard record.vector.allSatisfy(\.isFinite),
            record.metadata.values.allSatisfy({ if case .double(let value) = $0 { value.isFinite } else { true } })
        else {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            return try encoder.encode(record)
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(record.text.utf8.count + record.vector.count * 12 + 400)
        bytes.append(contentsOf: #"{"document_key":"#.utf8)
        JSONString.append(record.documentKey, to: &bytes)
        bytes.append(contentsOf: #","id":"#.utf8)
        JSONString.append(record.id.rawValue, to: &bytes)
        bytes.append(contentsOf: #","metadata":"#.utf8)
        appendMetadata(record.metadata, to: &bytes)
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

    /// The metadata object, keys in the order `JSONEncoder`'s `.sortedKeys` gives (their UTF-8 bytes).
    static func appendMetadata(_ metadata: [String: MetadataValue], to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "{"))
        for (index, entry) in metadata.sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) })
            .enumerated()
        {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            JSONString.append(entry.key, to: &bytes)
            bytes.append(UInt8(ascii: ":"))
            switch entry.value {
            case .string(let text): JSONString.append(text, to: &bytes)
            case .int(let number): bytes.append(contentsOf: String(number).utf8)
            case .double(let number): appendNumber(number.description, to: &bytes)
            case .bool(let flag): bytes.append(contentsOf: (flag ? "true" : "false").utf8)
            case .time: JSONString.append(entry.value.text, to: &bytes)
            case .strings(let texts):
                bytes.append(UInt8(ascii: "["))
                for (position, text) in texts.enumerated() {
                    if position > 0 { bytes.append(UInt8(ascii: ",")) }
                    JSONString.append(text, to: &bytes)
                }
                bytes.append(UInt8(ascii: "]"))
            }
        }
        bytes.append(UInt8(ascii: "}"))
    }

    /// A finite float as `JSONEncoder` writes it: its shortest round-trip description, without the `.0` of a
    /// whole number (`1`, `-0`, `0.1`, `1e-05`, `1.2345679e+08`).
    static func appendNumber(_ value: Float, to bytes: inout [UInt8]) { appendNumber(value.description, to: &bytes) }

    /// A finite number's description as `JSONEncoder` writes it (without the `.0` of a whole number).
    /// The description is ASCII, so its last two bytes are its last two characters.
    static func appendNumber(_ text: String, to bytes: inout [UInt8]) {
        var text = text
        text.withUTF8 { utf8 in
            let count = utf8.count
            if count >= 2 && utf8[count - 2] == UInt8(ascii: ".") && utf8[count - 1] == UInt8(ascii: "0") {
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[..<(count - 2)]))
            } else {
                bytes.append(contentsOf: utf8)
            }
        }
    }
}
