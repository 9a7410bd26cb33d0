import CZlib

/// Writes PNG images in memory for tests: no file of them is committed, and no other program is needed to
/// make them.
package enum PNGWriter {
    /// A picture without any text: a vertical gradient from sky blue to sand, with a faint diagonal grain
    /// (OCR finds nothing in it; a vision model would call it a beach). `width`×`height` RGB pixels.
    package static func photo(width: Int = 320, height: Int = 200) -> [UInt8] {
        var rows: [UInt8] = []
        rows.reserveCapacity((width * 3 + 1) * height)
        for y in 0..<height {
            rows.append(0)  // filter: none
            let t = Double(y) / Double(height)
            let sky = (135.0, 206.0, 235.0)
            let sand = (240.0, 230.0, 140.0)
            for x in 0..<width {
                let grain = Double((x * 7 + y * 13) % 9 - 4)
                for (top, bottom) in [(sky.0, sand.0), (sky.1, sand.1), (sky.2, sand.2)] {
                    rows.append(UInt8(max(0, min(255, top * (1 - t) + bottom * t + grain))))
                }
            }
        }
        var header: [UInt8] = u32(width) + u32(height)
        header += [8, 2, 0, 0, 0]  // 8 bits per sample, RGB, deflate, no filter choice, no interlace
        return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
            + chunk("IHDR", header) + chunk("IDAT", zlib(rows)) + chunk("IEND", [])
    }

    private static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let body = Array(type.utf8) + data
        let crc = body.withUnsafeBufferPointer { crc32(0, $0.baseAddress, uInt($0.count)) }
        return u32(data.count) + body + u32(Int(crc))
    }

    /// The zlib stream (header, deflate, Adler-32) PNG's IDAT holds.
    private static func zlib(_ data: [UInt8]) -> [UInt8] {
        var size = compressBound(uLong(data.count))
        var out = [UInt8](repeating: 0, count: Int(size))
        let status = out.withUnsafeMutableBufferPointer { o in
            data.withUnsafeBufferPointer { i in compress(o.baseAddress, &size, i.baseAddress, uLong(data.count)) }
        }
        precondition(status == Z_OK, "compress failed: \(status)")
        return Array(out.prefix(Int(size)))
    }

    private static func u32(_ value: Int) -> [UInt8] { (0..<4).reversed().map { UInt8(value >> ($0 * 8) & 0xFF) } }
}
