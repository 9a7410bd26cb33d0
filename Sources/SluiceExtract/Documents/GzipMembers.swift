import CZlib
import SluiceCore

/// Bytes in the gzip format (RFC 1952), as a `.gz` file holds them: one member or several written one after
/// the other (`cat a.gz b.gz`), each checked against its CRC-32 and length by zlib. Used for gzipped sitemaps
/// (`sitemap.xml.gz`), which servers send as the file's bytes, not with a `Content-Encoding` the HTTP client
/// would undo.
package enum GzipMembers {
    /// Whether `bytes` begin as a gzip member does (its two magic bytes and the DEFLATE method).
    package static func isGzip(_ bytes: [UInt8]) -> Bool {
        bytes.count >= 3 && bytes[0] == 0x1F && bytes[1] == 0x8B && bytes[2] == 8
    }

    /// The members' data, inflated and joined.
    /// - Parameter maxBytes: the most inflated bytes accepted; a file that would inflate past it is refused
    ///   as soon as it does (a few kilobytes can inflate to gigabytes), before more is inflated.
    /// - Throws: ``SluiceError/Code/malformed`` for data that is not gzip, is damaged, or is cut short;
    ///   ``SluiceError/Code/tooLarge`` past `maxBytes`.
    package static func inflate(_ bytes: [UInt8], maxBytes: Int) throws -> [UInt8] {
        guard isGzip(bytes) else { throw SluiceError(.malformed, "not gzip data") }
        var stream = z_stream()
        guard sluice_inflate_init_gzip(&stream) == Z_OK else { throw SluiceError(.malformed, "zlib could not start") }
        defer { inflateEnd(&stream) }
        var output: [UInt8] = []
        var piece = [UInt8](repeating: 0, count: 1 << 16)
        var input = bytes  // zlib's next_in is not const
        try input.withUnsafeMutableBufferPointer { source in
            stream.next_in = source.baseAddress
            stream.avail_in = uInt(source.count)
            while true {
                let waiting = stream.avail_in
                let (status, produced) = piece.withUnsafeMutableBufferPointer { target -> (Int32, Int) in
                    stream.next_out = target.baseAddress
                    stream.avail_out = uInt(target.count)
                    let status = CZlib.inflate(&stream, Z_NO_FLUSH)
                    return (status, target.count - Int(stream.avail_out))
                }
                if produced > 0 {
                    guard output.count + produced <= maxBytes else {
                        throw SluiceError(.tooLarge, "it inflates to more than \(maxBytes) bytes")
                    }
                    output += piece[0..<produced]
                }
                switch status {
                case Z_STREAM_END:
                    // Another member may follow; anything else after the last one is not gzip.
                    let rest = Int(stream.avail_in)
                    if rest == 0 { return }
                    let next = source.count - rest
                    guard isGzip(Array(source[next..<min(source.count, next + 3)])) else {
                        throw SluiceError(.malformed, "bytes that are not gzip follow its data")
                    }
                    guard inflateReset(&stream) == Z_OK else { throw SluiceError(.malformed, "zlib could not restart") }
                case Z_OK, Z_BUF_ERROR:
                    // No output and no input taken: the data ends before its member does.
                    if produced == 0 && (stream.avail_in == 0 || stream.avail_in == waiting) {
                        throw SluiceError(.malformed, "its compressed data is cut short")
                    }
                default:
                    throw SluiceError(.malformed, "its compressed data is damaged (zlib \(status))")
                }
            }
        }
        return output
    }
}
