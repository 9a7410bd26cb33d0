import CZlib
import SluiceCore

/// A ZIP archive read from memory: its central directory, and each entry's data inflated with zlib,
/// bounded by the entry's own compressed bytes.
///
/// Sluice reads ZIP containers (DOCX) itself rather than through ZIPFoundation, whose 0.9.20 release
/// trapped on an entry whose offset points past the end of an in-memory archive, and looped forever on a
/// DEFLATE stream that ends before its end marker (it reads on to the end of the file and then keeps
/// reading nothing): both found by `scripts/fuzz.sh`. Here every offset and size is checked against the
/// bytes before it is used, a stream must end within its compressed size, and the CRC-32 must match.
/// Only what a DOCX needs is supported: stored and deflated entries, no encryption, no ZIP64.
struct ZIPArchive {
    struct Entry {
        var path: String
        var method: UInt16
        var flags: UInt16
        var crc32: UInt32
        var compressedSize: Int
        var uncompressedSize: Int
        var localHeaderOffset: Int
    }

    private let bytes: [UInt8]
    private(set) var entries: [String: Entry] = [:]

    /// Reads the central directory.
    /// - Throws: ``SluiceError/Code/malformed`` when the bytes are not a ZIP archive this reader takes.
    init(bytes: [UInt8]) throws {
        self.bytes = bytes
        // The end-of-central-directory record: 22 bytes plus a comment of up to 65,535, at the end.
        let minimum = 22
        guard bytes.count >= minimum else { throw Self.malformed("too short for a ZIP archive") }
        var end = -1
        var position = bytes.count - minimum
        let lowest = max(0, bytes.count - minimum - 65_535)
        while position >= lowest {
            if bytes.u32(at: position) == 0x0605_4B50 {
                end = position
                break
            }
            position -= 1
        }
        guard end >= 0 else { throw Self.malformed("no end of central directory (not a ZIP archive, or truncated)") }
        let count = Int(bytes.u16(at: end + 10))
        let directorySize = Int(bytes.u32(at: end + 12))
        let directoryOffset = Int(bytes.u32(at: end + 16))
        if count == 0xFFFF || directorySize == 0xFFFF_FFFF || directoryOffset == 0xFFFF_FFFF {
            throw Self.malformed("ZIP64 archives are not supported")
        }
        guard directoryOffset <= end, directorySize <= end - directoryOffset else {
            throw Self.malformed("the central directory lies outside the archive")
        }
        var cursor = directoryOffset
        for _ in 0..<count {
            guard cursor + 46 <= end, bytes.u32(at: cursor) == 0x0201_4B50 else {
                throw Self.malformed("a central directory entry is damaged")
            }
            let nameLength = Int(bytes.u16(at: cursor + 28))
            let extraLength = Int(bytes.u16(at: cursor + 30))
            let commentLength = Int(bytes.u16(at: cursor + 32))
            let next = cursor + 46 + nameLength + extraLength + commentLength
            guard next <= end else { throw Self.malformed("a central directory entry runs past the directory") }
            let entry = Entry(
                path: String(decoding: bytes[(cursor + 46)..<(cursor + 46 + nameLength)], as: UTF8.self),
                method: bytes.u16(at: cursor + 10),
                flags: bytes.u16(at: cursor + 8),
                crc32: bytes.u32(at: cursor + 16),
                compressedSize: Int(bytes.u32(at: cursor + 20)),
                uncompressedSize: Int(bytes.u32(at: cursor + 24)),
                localHeaderOffset: Int(bytes.u32(at: cursor + 42))
            )
            if entries[entry.path] == nil { entries[entry.path] = entry }
            cursor = next
        }
    }

    /// Streams an entry's data, inflated, to `consume` in pieces of at most 64 KiB.
    /// - Throws: ``SluiceError/Code/malformed`` for data that is out of bounds, encrypted, compressed
    ///   otherwise than stored or deflated, cut short, or whose CRC-32 does not match; what `consume` throws.
    func read(_ entry: Entry, _ consume: (ArraySlice<UInt8>) throws -> Void) throws {
        let header = entry.localHeaderOffset
        guard header <= bytes.count - 30, bytes.u32(at: header) == 0x0403_4B50 else {
            throw Self.malformed("\(entry.path): its local header is missing or outside the archive")
        }
        let start = header + 30 + Int(bytes.u16(at: header + 26)) + Int(bytes.u16(at: header + 28))
        guard start <= bytes.count, entry.compressedSize <= bytes.count - start else {
            throw Self.malformed("\(entry.path): its data runs past the end of the archive")
        }
        guard entry.flags & 0x1 == 0 else { throw Self.malformed("\(entry.path) is encrypted") }
        let data = bytes[start..<(start + entry.compressedSize)]
        var crc = crc32(0, nil, 0)
        switch entry.method {
        case 0:
            for offset in stride(from: data.startIndex, to: data.endIndex, by: 1 << 16) {
                let piece = data[offset..<min(offset + (1 << 16), data.endIndex)]
                crc = piece.withUnsafeBufferPointer { crc32(crc, $0.baseAddress, uInt($0.count)) }
                try consume(piece)
            }
        case 8:
            crc = try Self.inflate(data, path: entry.path) { piece in
                try consume(piece)
            }
        default:
            throw Self.malformed(
                "\(entry.path) uses compression method \(entry.method) (only stored and deflated are read)"
            )
        }
        guard UInt32(truncatingIfNeeded: crc) == entry.crc32 else {
            throw Self.malformed("\(entry.path): CRC-32 mismatch (damaged archive)")
        }
    }

    /// Inflates raw DEFLATE `data`, which must end (`Z_STREAM_END`) within itself; returns the CRC-32 of
    /// what came out.
    private static func inflate(
        _ data: ArraySlice<UInt8>,
        path: String,
        _ consume: (ArraySlice<UInt8>) throws -> Void
    ) throws -> uLong {
        var stream = z_stream()
        guard sluice_inflate_init_raw(&stream) == Z_OK else { throw malformed("\(path): zlib could not start") }
        defer { inflateEnd(&stream) }
        var output = [UInt8](repeating: 0, count: 1 << 16)
        var crc = crc32(0, nil, 0)
        var input = Array(data)  // zlib's next_in is not const
        var finished = false
        try input.withUnsafeMutableBufferPointer { source in
            stream.next_in = source.baseAddress
            stream.avail_in = uInt(source.count)
            while !finished {
                let (status, produced) = output.withUnsafeMutableBufferPointer { target -> (Int32, Int) in
                    stream.next_out = target.baseAddress
                    stream.avail_out = uInt(target.count)
                    let status = CZlib.inflate(&stream, Z_NO_FLUSH)
                    return (status, target.count - Int(stream.avail_out))
                }
                switch status {
                case Z_STREAM_END: finished = true
                case Z_OK: break
                case Z_BUF_ERROR where produced == 0:
                    // No input left and no progress: the stream ends before its end marker.
                    throw malformed("\(path): its compressed data is cut short")
                case Z_BUF_ERROR: break
                default: throw malformed("\(path): its compressed data is damaged (zlib \(status))")
                }
                if produced > 0 {
                    crc = output.withUnsafeBufferPointer { crc32(crc, $0.baseAddress, uInt(produced)) }
                    try consume(output[0..<produced])
                }
                if !finished && produced == 0 && stream.avail_in == 0 {
                    throw malformed("\(path): its compressed data is cut short")
                }
            }
        }
        return crc
    }

    private static func malformed(_ message: String) -> SluiceError {
        SluiceError(.malformed, "not a readable ZIP archive (corrupt or truncated): \(message)")
    }
}

extension [UInt8] {
    /// The little-endian UInt16 at `offset` (the caller checked the bounds).
    fileprivate func u16(at offset: Int) -> UInt16 { UInt16(self[offset]) | UInt16(self[offset + 1]) << 8 }
    /// The little-endian UInt32 at `offset` (the caller checked the bounds).
    fileprivate func u32(at offset: Int) -> UInt32 {
        UInt32(self[offset]) | UInt32(self[offset + 1]) << 8 | UInt32(self[offset + 2]) << 16 | UInt32(self[offset + 3])
            << 24
    }
}
