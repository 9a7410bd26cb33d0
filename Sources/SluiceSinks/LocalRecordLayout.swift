import Foundation
import SluiceCore

/// The bytes after a local-store value's vector (`LocalSink+Encoding.swift`): the record's document key,
/// ordinal, text and metadata, in one of two layouts told apart by their first byte.
///
/// - **JSON** (written before 2026-11-29, read still): the first byte is `{`; an object with `key`,
///   `ordinal`, `text` and `metadata` (``MetadataValue``'s `Codable` form).
/// - **Binary, version 2** (written since): the first byte is ``binaryVersion``, then
///   `[varint key length][key][zigzag varint ordinal][varint text length][text][varint metadata count]`
///   and each entry, keys in byte order: `[varint key length][key][tag][value]`, by tag: 0 a string
///   (`[varint length][UTF-8]`), 1 an integer (zigzag varint), 2 a double (its IEEE 754 bits, 8 bytes little
///   endian), 3 a boolean (one byte, 0 or 1), 4 a time (zigzag varint of Unix seconds, rounded down: a time is
///   kept to the second), 5 a list of strings (`[varint count]` then each as a string). Lengths are in bytes.
///
/// Encoding JSON took about a tenth of a local-store run's CPU (`JSONEncoder`, 0.33 CPU-s of 3.6 on the
/// latency benchmark's corpus, docs/BENCHMARKS.md); this layout is written by hand in one pass.
///
/// The binary layout keeps every value as it was written: JSON turned a double with an integral value into
/// an integer, and a string in RFC 3339 form into a time, when read back; the binary layout keeps a double
/// a double and a string a string, as the record had them. Any other first byte is a layout this version
/// does not know (a store written by a later Sluice): reading it fails with `sinkFailed`.
enum LocalRecordLayout {
    /// The first byte of the binary layout.
    static let binaryVersion: UInt8 = 2
    /// The first byte of the JSON layout.
    static let jsonMarker = UInt8(ascii: "{")

    /// The JSON layout's object.
    private struct Stored: Codable {
        var key: String
        var ordinal: Int
        var text: String
        var metadata: [String: MetadataValue]
    }

    /// The record's fields, as they follow its vector.
    struct Fields {
        var key: String
        var ordinal: Int
        var text: String
        var metadata: [String: MetadataValue]
    }

    /// Appends the binary layout of `record`'s fields to `out`.
    static func appendBinary(_ record: VectorRecord, to out: inout [UInt8]) {
        out.append(binaryVersion)
        appendString(record.documentKey, to: &out)
        appendVarint(zigzag(Int64(record.ordinal)), to: &out)
        appendString(record.text, to: &out)
        appendVarint(UInt64(record.metadata.count), to: &out)
        for (key, value) in record.metadata.sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }) {
            appendString(key, to: &out)
            switch value {
            case .string(let text):
                out.append(0)
                appendString(text, to: &out)
            case .int(let number):
                out.append(1)
                appendVarint(zigzag(Int64(number)), to: &out)
            case .double(let number):
                out.append(2)
                withUnsafeBytes(of: number.bitPattern.littleEndian) { out += $0 }
            case .bool(let flag):
                out.append(3)
                out.append(flag ? 1 : 0)
            case .time(let date):
                out.append(4)
                let seconds = date.timeIntervalSince1970.rounded(.down)
                appendVarint(zigzag(Int64(exactly: seconds) ?? (seconds < 0 ? Int64.min : Int64.max)), to: &out)
            case .strings(let texts):
                out.append(5)
                appendVarint(UInt64(texts.count), to: &out)
                for text in texts { appendString(text, to: &out) }
            }
        }
    }

    /// Reads the fields from the bytes after the vector, in either layout.
    /// - Throws: `sinkFailed` for bytes in neither layout, or cut short.
    static func decode(_ bytes: UnsafeRawBufferPointer) throws -> Fields {
        guard let first = bytes.first else { throw corrupt("no fields") }
        switch first {
        case jsonMarker:
            let stored = try JSONDecoder().decode(Stored.self, from: Data(bytes))
            return Fields(key: stored.key, ordinal: stored.ordinal, text: stored.text, metadata: stored.metadata)
        case binaryVersion:
            var reader = Reader(bytes: bytes, offset: 1)
            let key = try reader.string()
            let ordinal = Int(truncatingIfNeeded: unzigzag(try reader.varint()))
            let text = try reader.string()
            let count = try reader.varint()
            guard count <= UInt64(bytes.count) else { throw corrupt("metadata count \(count)") }
            var metadata: [String: MetadataValue] = [:]
            metadata.reserveCapacity(Int(count))
            for _ in 0..<count {
                let name = try reader.string()
                metadata[name] = try reader.value()
            }
            guard reader.offset == bytes.count else { throw corrupt("\(bytes.count - reader.offset) bytes left over") }
            return Fields(key: key, ordinal: ordinal, text: text, metadata: metadata)
        default:
            throw SluiceError(
                .sinkFailed,
                "a record in the local store has layout \(first), which this version of Sluice cannot read (written by a later version?)"
            )
        }
    }

    /// The JSON layout's document key alone (the rest of the object is skipped).
    private struct StoredKey: Decodable { var key: String }

    /// Reads only the document key from the bytes after the vector, in either layout (a scan for keys
    /// decodes nothing else).
    /// - Throws: `sinkFailed` for bytes in neither layout, or cut short.
    static func documentKey(_ bytes: UnsafeRawBufferPointer) throws -> String {
        guard let first = bytes.first else { throw corrupt("no fields") }
        switch first {
        case jsonMarker:
            return try JSONDecoder().decode(StoredKey.self, from: Data(bytes)).key
        case binaryVersion:
            var reader = Reader(bytes: bytes, offset: 1)
            return try reader.string()
        default:
            return try decode(bytes).key  // throws the layout's error
        }
    }

    /// The JSON layout's bytes of a record's fields (only tests write it now: stores written before keep it).
    static func json(_ record: VectorRecord) throws -> [UInt8] {
        Array(
            try JSONEncoder().encode(
                Stored(key: record.documentKey, ordinal: record.ordinal, text: record.text, metadata: record.metadata)
            )
        )
    }

    // MARK: - Binary pieces

    private static func corrupt(_ what: String) -> SluiceError {
        SluiceError(.sinkFailed, "corrupt record in local store (\(what))")
    }

    static func zigzag(_ value: Int64) -> UInt64 { UInt64(bitPattern: (value << 1) ^ (value >> 63)) }
    static func unzigzag(_ value: UInt64) -> Int64 { Int64(bitPattern: value >> 1) ^ -Int64(bitPattern: value & 1) }

    /// The keyword postings' varint (LEB128), so the store has one.
    static func appendVarint(_ value: UInt64, to out: inout [UInt8]) {
        KeywordPostings.putVarint(value, into: &out)
    }

    private static func appendString(_ text: String, to out: inout [UInt8]) {
        var text = text
        text.withUTF8 { bytes in
            appendVarint(UInt64(bytes.count), to: &out)
            out.append(contentsOf: bytes)
        }
    }

    /// Reads the binary layout front to back, every read checked against the end.
    private struct Reader {
        let bytes: UnsafeRawBufferPointer
        var offset: Int

        mutating func byte() throws -> UInt8 {
            guard offset < bytes.count else { throw corrupt("cut short at \(offset)") }
            defer { offset += 1 }
            return bytes[offset]
        }

        mutating func varint() throws -> UInt64 {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while true {
                let byte = try byte()
                guard shift < 64 else { throw corrupt("varint too long at \(offset)") }
                value |= UInt64(byte & 0x7F) << shift
                if byte < 0x80 { return value }
                shift += 7
            }
        }

        mutating func string() throws -> String {
            let length = try varint()
            guard length <= UInt64(bytes.count - offset) else {
                throw corrupt("string of \(length) bytes at \(offset)")
            }
            let end = offset + Int(length)
            defer { offset = end }
            return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[offset..<end]), as: UTF8.self)
        }

        mutating func value() throws -> MetadataValue {
            switch try byte() {
            case 0: return .string(try string())
            case 1: return .int(Int(truncatingIfNeeded: unzigzag(try varint())))
            case 2:
                guard bytes.count - offset >= 8 else { throw corrupt("double cut short at \(offset)") }
                let bits = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
                offset += 8
                return .double(Double(bitPattern: bits))
            case 3: return .bool(try byte() != 0)
            case 4: return .time(Date(timeIntervalSince1970: Double(unzigzag(try varint()))))
            case 5:
                let count = try varint()
                guard count <= UInt64(bytes.count - offset) else { throw corrupt("list of \(count) at \(offset)") }
                var texts: [String] = []
                texts.reserveCapacity(Int(count))
                for _ in 0..<count { texts.append(try string()) }
                return .strings(texts)
            case let tag: throw corrupt("metadata tag \(tag) at \(offset - 1)")
            }
        }
    }
}
