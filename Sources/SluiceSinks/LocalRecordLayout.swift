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
///
/// The bytes are read as untrusted (a damaged page, a hostile file): every read is checked against the end,
/// a length or count is compared with the bytes left before anything is allocated by it (a count of 2^60 is
/// refused, not reserved), text must be valid UTF-8, tags and the version byte must be known and metadata
/// keys strictly in byte order (so no key twice). Whatever fails throws `sinkFailed` naming the record
/// (``decode(_:record:)``), never traps (`LocalRecordLayoutTests`, the `local-record-fields` fuzz target).
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

    /// One decoder for every JSON record a scan reads (a `JSONDecoder` made per record cost more than the
    /// decoding in a scan of a store of JSON records; it keeps no state between calls).
    private static let jsonDecoder = JSONDecoder()

    /// Reads the fields from the bytes after the vector, in either layout.
    /// - Parameter record: the record's id, named in the error.
    /// - Throws: `sinkFailed` naming the record, for bytes in neither layout, cut short, or not as the layout
    ///   says (``LocalRecordLayout``).
    static func decode(_ bytes: UnsafeRawBufferPointer, record: String) throws -> Fields {
        do {
            return try fields(bytes)
        } catch let problem as Problem {
            throw corrupt(record, problem.description)
        } catch {
            throw corrupt(record, "not JSON as written: \(error)")
        }
    }

    private static func fields(_ bytes: UnsafeRawBufferPointer) throws -> Fields {
        guard let first = bytes.first else { throw Problem("no fields") }
        switch first {
        case jsonMarker:
            let stored = try jsonDecoder.decode(Stored.self, from: Data(bytes))
            return Fields(key: stored.key, ordinal: stored.ordinal, text: stored.text, metadata: stored.metadata)
        case binaryVersion:
            var reader = Reader(bytes: bytes, offset: 1)
            let key = try reader.string()
            let ordinal = Int(truncatingIfNeeded: unzigzag(try reader.varint()))
            let text = try reader.string()
            // An entry takes 3 bytes at least (an empty key's length, a tag, a one-byte value).
            let count = try reader.count(ofAtLeast: 3, "metadata entries")
            var metadata: [String: MetadataValue] = [:]
            metadata.reserveCapacity(min(count, 64))
            var previous: String?
            for _ in 0..<count {
                let name = try reader.string()
                if let previous, !previous.utf8.lexicographicallyPrecedes(name.utf8) {
                    throw Problem("metadata key out of order or twice at \(reader.offset)")
                }
                metadata[name] = try reader.value()
                previous = name
            }
            guard reader.offset == bytes.count else { throw Problem("\(bytes.count - reader.offset) bytes left over") }
            return Fields(key: key, ordinal: ordinal, text: text, metadata: metadata)
        default:
            throw Problem(
                "layout \(first), which this version of Sluice cannot read (written by a later version?)"
            )
        }
    }

    /// The JSON layout's document key alone (the rest of the object is skipped).
    private struct StoredKey: Decodable { var key: String }

    /// Reads only the document key from the bytes after the vector, in either layout (a scan for keys
    /// decodes nothing else).
    /// - Throws: `sinkFailed` naming the record, for bytes in neither layout, or cut short.
    static func documentKey(_ bytes: UnsafeRawBufferPointer, record: String) throws -> String {
        do {
            switch bytes.first {
            case jsonMarker:
                return try jsonDecoder.decode(StoredKey.self, from: Data(bytes)).key
            case binaryVersion:
                var reader = Reader(bytes: bytes, offset: 1)
                return try reader.string()
            default:
                return try fields(bytes).key  // throws the layout's error
            }
        } catch let problem as Problem {
            throw corrupt(record, problem.description)
        } catch {
            throw corrupt(record, "not JSON as written: \(error)")
        }
    }

    /// Reads only the metadata value named `name` from the bytes after the vector, in either layout (nil when the
    /// record has none): the binary layout's key and text are stepped over, not decoded.
    /// - Throws: `sinkFailed` naming the record, for bytes in neither layout, or cut short before the value.
    static func metadataValue(
        named name: String,
        in bytes: UnsafeRawBufferPointer,
        record: String
    ) throws
        -> MetadataValue?
    {
        guard bytes.first == binaryVersion else { return try decode(bytes, record: record).metadata[name] }
        do {
            var reader = Reader(bytes: bytes, offset: 1)
            try reader.skipString()
            _ = try reader.varint()
            try reader.skipString()
            let count = try reader.count(ofAtLeast: 3, "metadata entries")
            for _ in 0..<count {
                let key = try reader.string()
                if key.utf8.elementsEqual(name.utf8) { return try reader.value() }
                // Keys are in byte order: past `name`, it is not there.
                if name.utf8.lexicographicallyPrecedes(key.utf8) { return nil }
                _ = try reader.value()
            }
            return nil
        } catch let problem as Problem {
            throw corrupt(record, problem.description)
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

    /// What is wrong with a record's bytes, before the record's id is known to the reader.
    private struct Problem: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    /// The error for the record `id` whose bytes are not as written: `what` says where.
    static func corrupt(_ id: String, _ what: String) -> SluiceError {
        SluiceError(
            .sinkFailed,
            "corrupt record \(DisplayEscaping.escaped(id)) in the local store (\(what)); restore the store from a backup, or write it again with sluice run --reembed (its vectors come from the embedding cache)"
        )
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
            guard offset < bytes.count else { throw Problem("cut short at \(offset)") }
            defer { offset += 1 }
            return bytes[offset]
        }

        mutating func varint() throws -> UInt64 {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while true {
                let byte = try byte()
                // The tenth byte holds the 64th bit alone.
                guard shift < 63 || (shift == 63 && byte <= 1) else { throw Problem("varint too long at \(offset)") }
                value |= UInt64(byte & 0x7F) << shift
                if byte < 0x80 { return value }
                shift += 7
            }
        }

        /// A count of things of at least `size` bytes each, checked against the bytes left.
        mutating func count(ofAtLeast size: Int, _ what: String) throws -> Int {
            let count = try varint()
            guard count <= UInt64((bytes.count - offset) / size) else {
                throw Problem("\(count) \(what) at \(offset), in \(bytes.count - offset) bytes")
            }
            return Int(count)
        }

        mutating func string() throws -> String {
            let length = try varint()
            guard length <= UInt64(bytes.count - offset) else {
                throw Problem("string of \(length) bytes at \(offset), \(bytes.count - offset) left")
            }
            let end = offset + Int(length)
            guard let text = String(validating: UnsafeRawBufferPointer(rebasing: bytes[offset..<end]), as: UTF8.self)
            else { throw Problem("text at \(offset) is not UTF-8") }
            offset = end
            return text
        }

        /// Steps over a string without reading it.
        mutating func skipString() throws {
            let length = try varint()
            guard length <= UInt64(bytes.count - offset) else {
                throw Problem("string of \(length) bytes at \(offset), \(bytes.count - offset) left")
            }
            offset += Int(length)
        }

        mutating func value() throws -> MetadataValue {
            switch try byte() {
            case 0: return .string(try string())
            case 1: return .int(Int(truncatingIfNeeded: unzigzag(try varint())))
            case 2:
                guard bytes.count - offset >= 8 else { throw Problem("double cut short at \(offset)") }
                let bits = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
                offset += 8
                return .double(Double(bitPattern: bits))
            case 3:
                switch try byte() {
                case 0: return .bool(false)
                case 1: return .bool(true)
                case let other: throw Problem("boolean \(other) at \(offset - 1)")
                }
            case 4: return .time(Date(timeIntervalSince1970: Double(unzigzag(try varint()))))
            case 5:
                let count = try count(ofAtLeast: 1, "strings")
                var texts: [String] = []
                texts.reserveCapacity(min(count, 64))
                for _ in 0..<count { texts.append(try string()) }
                return .strings(texts)
            case let tag: throw Problem("metadata tag \(tag) at \(offset - 1)")
            }
        }
    }
}
