import CZlib

/// Writes gzip members (RFC 1952) in memory, for tests of what reads `.gz` files (gzipped sitemaps).
package enum GzipWriter {
    /// One member: the 10-byte header (no name, no time), the data deflated, its CRC-32 and its length.
    package static func gzip(_ data: [UInt8]) -> [UInt8] {
        let crc = UInt32(data.withUnsafeBufferPointer { crc32(0, $0.baseAddress, uInt($0.count)) })
        let header: [UInt8] = [0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 2, 0xFF]
        return header + ZIPWriter.deflate(data) + little(crc) + little(UInt32(truncatingIfNeeded: data.count))
    }

    private static func little(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(value >> ($0 * 8) & 0xFF) } }
}
