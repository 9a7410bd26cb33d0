import CXXHash
import Foundation

/// A 128-bit XXH3 digest: the identity of a document's bytes or of a chunk's normalized text.
///
/// The hexadecimal form matches `xxhsum -H2` (high 64 bits first).
public struct ContentHash: Hashable, Sendable, Codable, CustomStringConvertible {
    public var high: UInt64
    public var low: UInt64

    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// Hashes raw bytes with XXH3-128.
    public init(bytes: UnsafeRawBufferPointer) {
        let digest = XXH3_128bits(bytes.baseAddress, bytes.count)
        self.init(high: digest.high64, low: digest.low64)
    }

    /// Hashes the bytes of a byte collection.
    public init<Bytes: ContiguousBytes>(of bytes: Bytes) {
        self = bytes.withUnsafeBytes { ContentHash(bytes: $0) }
    }

    /// Hashes the UTF-8 encoding of a string.
    public init(utf8 text: String) {
        var copy = text
        self = copy.withUTF8 { ContentHash(bytes: UnsafeRawBufferPointer($0)) }
    }

    /// 32 lowercase hexadecimal digits, high word first.
    public var hex: String { Self.hex64(high) + Self.hex64(low) }

    public var description: String { hex }

    /// Parses the 32-digit form produced by ``hex``.
    public init?(hex: String) {
        guard hex.utf8.count == 32,
            let high = UInt64(hex.prefix(16), radix: 16),
            let low = UInt64(hex.suffix(16), radix: 16)
        else { return nil }
        self.init(high: high, low: low)
    }

    /// The 16 bytes, big-endian (sortable, used as LMDB key material).
    public var bytes: [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(16)
        for shift in stride(from: 56, through: 0, by: -8) {
            out.append(UInt8(truncatingIfNeeded: high >> UInt64(shift)))
        }
        for shift in stride(from: 56, through: 0, by: -8) {
            out.append(UInt8(truncatingIfNeeded: low >> UInt64(shift)))
        }
        return out
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let value = ContentHash(hex: text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not a 128-bit hex hash: \(text)")
        }
        self = value
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(hex)
    }

    private static func hex64(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}

/// XXH3-64 of a string, for cheap bucketing (sharding, feature hashing).
public func xxh3_64(_ text: String, seed: UInt64 = 0) -> UInt64 {
    var copy = text
    return copy.withUTF8 { XXH3_64bits_withSeed($0.baseAddress, $0.count, seed) }
}

/// XXH3-64 of raw bytes.
public func xxh3_64(bytes: UnsafeRawBufferPointer, seed: UInt64 = 0) -> UInt64 {
    XXH3_64bits_withSeed(bytes.baseAddress, bytes.count, seed)
}
