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
