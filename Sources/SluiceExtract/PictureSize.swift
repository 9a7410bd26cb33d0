/// A picture's size in pixels, read from its file's header without decoding it: PNG (`IHDR`), GIF (the
/// logical screen), JPEG (the first start-of-frame marker), WebP (`VP8 `, `VP8L`, `VP8X`) — the formats
/// the vision APIs take. Nil for any other format, or a header cut short.
package struct PictureSize: Sendable, Hashable {
    package var width: Int
    package var height: Int

    package init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    /// The shorter side.
    package var shorterSide: Int { min(width, height) }

    package init?(of bytes: [UInt8]) {
        switch FormatSniffer.sniff(bytes) {
        case .png:
            guard bytes.count >= 24 else { return nil }
            self.init(width: Self.bigEndian(bytes, 16, 4), height: Self.bigEndian(bytes, 20, 4))
        case .gif:
            guard bytes.count >= 10 else { return nil }
            self.init(width: Self.littleEndian(bytes, 6, 2), height: Self.littleEndian(bytes, 8, 2))
        case .jpeg:
            guard let size = Self.jpeg(bytes) else { return nil }
            self = size
        case .webp:
            guard let size = Self.webp(bytes) else { return nil }
            self = size
        default:
            return nil
        }
    }

    /// Walks the JPEG's marker segments to the first start of frame (SOF0–SOF15, not DHT, JPG or DAC).
    private static func jpeg(_ bytes: [UInt8]) -> PictureSize? {
        var index = 2
        while index + 9 < bytes.count {
            guard bytes[index] == 0xFF else { return nil }
            let marker = bytes[index + 1]
            if marker == 0xFF {  // fill byte
                index += 1
                continue
            }
            if marker == 0xD8 || (0xD0...0xD7).contains(marker) || marker == 0x01 {
                index += 2
                continue
            }
            let length = bigEndian(bytes, index + 2, 2)
            if (0xC0...0xCF).contains(marker), ![0xC4, 0xC8, 0xCC].contains(marker) {
                return PictureSize(width: bigEndian(bytes, index + 7, 2), height: bigEndian(bytes, index + 5, 2))
            }
            guard length >= 2 else { return nil }
            index += 2 + length
        }
        return nil
    }

    /// WebP's size: the lossy frame's, the lossless bitstream's or the extended header's canvas.
    private static func webp(_ bytes: [UInt8]) -> PictureSize? {
        guard bytes.count >= 30 else { return nil }
        switch String(decoding: bytes[12..<16], as: UTF8.self) {
        case "VP8 ":
            return PictureSize(
                width: littleEndian(bytes, 26, 2) & 0x3FFF,
                height: littleEndian(bytes, 28, 2) & 0x3FFF
            )
        case "VP8L":
            let bits = littleEndian(bytes, 21, 4)
            return PictureSize(width: (bits & 0x3FFF) + 1, height: ((bits >> 14) & 0x3FFF) + 1)
        case "VP8X":
            return PictureSize(width: littleEndian(bytes, 24, 3) + 1, height: littleEndian(bytes, 27, 3) + 1)
        default:
            return nil
        }
    }

    private static func bigEndian(_ bytes: [UInt8], _ at: Int, _ count: Int) -> Int {
        guard at + count <= bytes.count else { return 0 }
        return bytes[at..<(at + count)].reduce(0) { $0 << 8 | Int($1) }
    }

    private static func littleEndian(_ bytes: [UInt8], _ at: Int, _ count: Int) -> Int {
        guard at + count <= bytes.count else { return 0 }
        return bytes[at..<(at + count)].reversed().reduce(0) { $0 << 8 | Int($1) }
    }
}
