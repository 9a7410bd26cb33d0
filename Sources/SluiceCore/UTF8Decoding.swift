/// Reads Unicode scalars straight from a string's UTF-8 bytes.
///
/// The bytes always come from a Swift `String`, so they are valid UTF-8 and no validation is done here.
/// Working on bytes with integer offsets keeps the chunker and the BPE tokenizers linear and fast even in
/// debug builds, and the offsets are exactly the UTF-8 offsets that ``Chunk/startOffset`` reports.
package enum UTF8Decoding {
    /// The scalar that starts at `index` and the number of bytes it takes.
    @inline(__always)
    package static func scalar(
        in bytes: UnsafeBufferPointer<UInt8>,
        at index: Int
    ) -> (scalar: Unicode.Scalar, length: Int) {
        let lead = UInt32(bytes[index])
        if lead < 0x80 {
            return (Unicode.Scalar(UInt8(truncatingIfNeeded: lead)), 1)
        }
        let value: UInt32
        let length: Int
        if lead < 0xE0 {
            value = (lead & 0x1F) << 6 | UInt32(bytes[index + 1] & 0x3F)
            length = 2
        } else if lead < 0xF0 {
            value = (lead & 0x0F) << 12 | UInt32(bytes[index + 1] & 0x3F) << 6 | UInt32(bytes[index + 2] & 0x3F)
            length = 3
        } else {
            value =
                (lead & 0x07) << 18 | UInt32(bytes[index + 1] & 0x3F) << 12 | UInt32(bytes[index + 2] & 0x3F) << 6
                | UInt32(bytes[index + 3] & 0x3F)
            length = 4
        }
        return (Unicode.Scalar(value) ?? "\u{FFFD}", length)
    }

    /// The offset where the scalar that ends just before `index` starts.
    @inline(__always)
    package static func scalarStart(in bytes: UnsafeBufferPointer<UInt8>, before index: Int) -> Int {
        var start = index - 1
        while start > 0 && isContinuation(bytes[start]) { start -= 1 }
        return start
    }

    /// Whether `byte` continues a multi-byte sequence (so no scalar starts there).
    @inline(__always)
    package static func isContinuation(_ byte: UInt8) -> Bool { byte & 0xC0 == 0x80 }

    /// Runs `body` on the UTF-8 bytes of `text` without copying them when the string is native.
    package static func withBytes<Result>(of text: String, _ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        if let result = text.utf8.withContiguousStorageIfAvailable(body) { return result }
        return Array(text.utf8).withUnsafeBufferPointer(body)
    }

    /// Runs `body` on the UTF-8 bytes of `text` without copying them when the substring is native.
    package static func withBytes<Result>(of text: Substring, _ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result
    {
        if let result = text.utf8.withContiguousStorageIfAvailable(body) { return result }
        return Array(text.utf8).withUnsafeBufferPointer(body)
    }
}
