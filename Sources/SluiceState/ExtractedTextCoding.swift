import SluiceCore

/// The compact binary form of an ``ExtractedText`` in the extraction cache.
///
/// Layout: a format byte, the XXH3-64 of the payload (8 bytes, little-endian), then the payload: document
/// metadata, then each section's text, page (0: none, else page + 1), heading path and metadata. Counts and
/// lengths are LEB128 varints, strings UTF-8. Decoding checks the checksum and every length, and returns
/// nil for anything else: a damaged entry is a cache miss, never a wrong text.
package enum ExtractedTextCoding {
    static let format: UInt8 = 1

    package static func encode(_ text: ExtractedText) -> [UInt8] {
        var payload: [UInt8] = []
        payload.reserveCapacity(text.utf8Count + 64 * text.sections.count + 64)
        appendPairs(text.metadata, to: &payload)
        appendVarint(text.sections.count, to: &payload)
        for section in text.sections {
            appendString(section.text, to: &payload)
            appendVarint(section.page.map { $0 + 1 } ?? 0, to: &payload)
            appendVarint(section.headingPath.count, to: &payload)
            for heading in section.headingPath { appendString(heading, to: &payload) }
            appendPairs(section.metadata, to: &payload)
        }
        return frame(payload: payload)
    }

    /// `payload` behind the header: the format byte and the payload's XXH3-64.
    package static func frame(payload: [UInt8]) -> [UInt8] {
        let checksum = payload.withUnsafeBytes { xxh3_64(bytes: $0) }
        var out: [UInt8] = [format]
        out.reserveCapacity(9 + payload.count)
        for shift in stride(from: 0, to: 64, by: 8) { out.append(UInt8(truncatingIfNeeded: checksum >> UInt64(shift))) }
        out += payload
        return out
    }

    /// The text, or nil when `bytes` are not a whole, intact entry of this format.
    package static func decode(_ bytes: [UInt8]) -> ExtractedText? {
        guard bytes.count >= 9, bytes[0] == format else { return nil }
        var checksum: UInt64 = 0
        for index in 0..<8 { checksum |= UInt64(bytes[1 + index]) << UInt64(8 * index) }
        let actual = bytes.withUnsafeBytes { xxh3_64(bytes: UnsafeRawBufferPointer(rebasing: $0[9...])) }
        guard actual == checksum else { return nil }
        var reader = Reader(bytes: bytes, position: 9)
        guard let metadata = reader.pairs(), let count = reader.varint() else { return nil }
        var sections: [TextSection] = []
        sections.reserveCapacity(min(count, bytes.count))
        for _ in 0..<count {
            guard let text = reader.string(), let page = reader.varint(), let headingCount = reader.varint(),
                headingCount <= bytes.count
            else { return nil }
            var headings: [String] = []
            for _ in 0..<headingCount {
                guard let heading = reader.string() else { return nil }
                headings.append(heading)
            }
            guard let sectionMetadata = reader.pairs() else { return nil }
            sections.append(
                TextSection(
                    text: text,
                    page: page == 0 ? nil : page - 1,
                    headingPath: headings,
                    metadata: sectionMetadata
                )
            )
        }
        guard reader.position == bytes.count else { return nil }
        return ExtractedText(sections: sections, metadata: metadata)
    }

    private static func appendVarint(_ value: Int, to out: inout [UInt8]) {
        var rest = UInt64(value)
        while rest >= 0x80 {
            out.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        out.append(UInt8(rest))
    }

    private static func appendString(_ string: String, to out: inout [UInt8]) {
        appendVarint(string.utf8.count, to: &out)
        out += string.utf8
    }

    private static func appendPairs(_ pairs: [String: String], to out: inout [UInt8]) {
        appendVarint(pairs.count, to: &out)
        for (key, value) in pairs.sorted(by: { $0.key < $1.key }) {
            appendString(key, to: &out)
            appendString(value, to: &out)
        }
    }

    /// Reads varints and strings, answering nil past the end or for malformed values.
    private struct Reader {
        let bytes: [UInt8]
        var position: Int

        mutating func varint() -> Int? {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while position < bytes.count, shift < 63 {
                let byte = bytes[position]
                position += 1
                value |= UInt64(byte & 0x7F) << shift
                if byte & 0x80 == 0 { return value <= UInt64(Int.max) ? Int(value) : nil }
                shift += 7
            }
            return nil
        }

        mutating func string() -> String? {
            guard let length = varint(), length <= bytes.count - position else { return nil }
            let slice = bytes[position..<position + length]
            position += length
            return String(validating: slice, as: UTF8.self)
        }

        mutating func pairs() -> [String: String]? {
            guard let count = varint(), count <= bytes.count else { return nil }
            var out: [String: String] = [:]
            for _ in 0..<count {
                guard let key = string(), let value = string() else { return nil }
                out[key] = value
            }
            return out
        }
    }
}
