import Foundation
import SluiceCore

/// The text forms PostgreSQL reads: COPY rows, vector literals (`[1,2.5,-3]`) and text arrays.
package enum PgvectorCopy {
    /// COPY text format: one line per record, tab-separated, with `\\`, tab, newline and CR escaped.
    /// Columns as in ``PgvectorSink/columns``.
    package static func encode(_ records: [VectorRecord]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(records.reduce(0) { $0 + $1.text.utf8.count + $1.vector.count * 11 + 200 })
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        for record in records {
            appendEscaped(record.id.rawValue, to: &out)
            out.append(0x09)
            appendEscaped(record.documentKey, to: &out)
            out.append(0x09)
            out += Array(String(record.ordinal).utf8)
            out.append(0x09)
            appendEscaped(record.text, to: &out)
            out.append(0x09)
            let metadata = (try? encoder.encode(record.metadata)) ?? Data("{}".utf8)
            appendEscaped(String(decoding: metadata, as: UTF8.self), to: &out)
            out.append(0x09)
            appendVector(record.vector, to: &out)
            out.append(0x0A)
        }
        return out
    }

    /// COPY binary format (`COPY … FROM STDIN WITH (FORMAT binary)`): no number formatting or parsing at
    /// all. Columns as in ``PgvectorSink/columns``: text, text, int4, text, jsonb (version 1 + JSON text),
    /// and pgvector's `vector_recv` layout (int16 dimensions, int16 unused, float4s, all big-endian), or
    /// `halfvec`'s (float16s) when `half` is set.
    package static func encodeBinary(_ records: [VectorRecord], half: Bool = false) -> [UInt8] {
        var out: [UInt8] = [0x50, 0x47, 0x43, 0x4F, 0x50, 0x59, 0x0A, 0xFF, 0x0D, 0x0A, 0x00]  // signature
        out += [0, 0, 0, 0, 0, 0, 0, 0]  // flags, header extension length
        out.reserveCapacity(records.reduce(19) { $0 + $1.text.utf8.count + $1.vector.count * 4 + 200 })
        var metadata: [UInt8] = []
        for record in records {
            appendInt16(6, to: &out)
            appendTextField(record.id.rawValue, to: &out)
            appendTextField(record.documentKey, to: &out)
            appendInt32(4, to: &out)
            appendInt32(Int32(truncatingIfNeeded: record.ordinal), to: &out)
            appendTextField(record.text, to: &out)
            metadata.removeAll(keepingCapacity: true)
            appendJSONObject(record.metadata, to: &metadata)
            appendInt32(Int32(metadata.count + 1), to: &out)
            out.append(1)  // jsonb binary version
            out += metadata
            appendInt32(Int32(4 + record.vector.count * (half ? 2 : 4)), to: &out)
            appendInt16(Int16(truncatingIfNeeded: record.vector.count), to: &out)
            appendInt16(0, to: &out)
            if half {
                record.vector.map { Float16($0).bitPattern.bigEndian }.withUnsafeBytes { out.append(contentsOf: $0) }
            } else {
                record.vector.map { $0.bitPattern.bigEndian }.withUnsafeBytes { out.append(contentsOf: $0) }
            }
        }
        appendInt16(-1, to: &out)  // trailer
        return out
    }

    /// A `[String: String]` as a JSON object with sorted keys (what jsonb stores either way).
    static func appendJSONObject(_ object: [String: MetadataValue], to out: inout [UInt8]) {
        out.append(0x7B)
        for (index, key) in object.keys.sorted().enumerated() {
            if index > 0 { out.append(0x2C) }
            appendJSONString(key, to: &out)
            out.append(0x3A)
            appendJSONValue(object[key]!, to: &out)
        }
        out.append(0x7D)
    }

    /// A value as JSON; a time as its RFC 3339 text (which sorts in time order), a non-finite number as null.
    private static func appendJSONValue(_ value: MetadataValue, to out: inout [UInt8]) {
        switch value {
        case .string(let text): appendJSONString(text, to: &out)
        case .int(let number): out += Array(String(number).utf8)
        case .double(let number): out += Array((number.isFinite ? "\(number)" : "null").utf8)
        case .bool(let flag): out += Array((flag ? "true" : "false").utf8)
        case .time: appendJSONString(value.text, to: &out)
        case .strings(let texts):
            out.append(0x5B)
            for (index, text) in texts.enumerated() {
                if index > 0 { out.append(0x2C) }
                appendJSONString(text, to: &out)
            }
            out.append(0x5D)
        }
    }

    private static func appendJSONString(_ text: String, to out: inout [UInt8]) {
        out.append(0x22)
        for byte in text.utf8 {
            switch byte {
            case 0x22: out += [0x5C, 0x22]
            case 0x5C: out += [0x5C, 0x5C]
            case 0x0A: out += [0x5C, 0x6E]
            case 0x0D: out += [0x5C, 0x72]
            case 0x09: out += [0x5C, 0x74]
            case 0x00: continue  // jsonb cannot hold \u0000
            case ..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                out += [0x5C, 0x75, 0x30, 0x30, hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
            default: out.append(byte)
            }
        }
        out.append(0x22)
    }

    private static func appendTextField(_ text: String, to out: inout [UInt8]) {
        let utf8 = text.utf8
        if utf8.contains(0) {
            let bytes = utf8.filter { $0 != 0 }  // PostgreSQL text cannot hold NUL
            appendInt32(Int32(bytes.count), to: &out)
            out += bytes
        } else {
            appendInt32(Int32(utf8.count), to: &out)
            out.append(contentsOf: utf8)
        }
    }

    private static func appendInt16(_ value: Int16, to out: inout [UInt8]) {
        let bits = UInt16(bitPattern: value)
        out += [UInt8(bits >> 8), UInt8(bits & 0xFF)]
    }

    private static func appendInt32(_ value: Int32, to out: inout [UInt8]) {
        let bits = UInt32(bitPattern: value)
        out += [UInt8(bits >> 24), UInt8((bits >> 16) & 0xFF), UInt8((bits >> 8) & 0xFF), UInt8(bits & 0xFF)]
    }

    private static func appendEscaped(_ text: String, to out: inout [UInt8]) {
        for byte in text.utf8 {
            switch byte {
            case 0x5C: out += [0x5C, 0x5C]
            case 0x09: out += [0x5C, 0x74]
            case 0x0A: out += [0x5C, 0x6E]
            case 0x0D: out += [0x5C, 0x72]
            case 0x00: continue  // PostgreSQL text cannot hold NUL
            default: out.append(byte)
            }
        }
    }

    static func appendVector(_ vector: [Float], to out: inout [UInt8]) {
        out.append(0x5B)
        for (index, value) in vector.enumerated() {
            if index > 0 { out.append(0x2C) }
            // Swift's description is the shortest text that reads back to the same Float, as pgvector's output.
            out += Array(value.description.utf8)
        }
        out.append(0x5D)
    }

    static func vectorLiteral(_ vector: [Float]) -> String {
        var out: [UInt8] = []
        appendVector(vector, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    static func parseVector(_ text: String) -> [Float] {
        text.utf8.split { $0 == 0x5B || $0 == 0x5D || $0 == 0x2C }.compactMap { Float(Substring($0)) }
    }

    /// `{a,b,c}`: ids are hex digits, so no quoting is needed.
    static func arrayLiteral(_ ids: ArraySlice<VectorID>) -> String {
        "{" + ids.map(\.rawValue).joined(separator: ",") + "}"
    }
}
