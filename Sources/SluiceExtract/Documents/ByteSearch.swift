/// Finding a byte string in bytes (a part name in a ZIP directory, a marker in an XML part).
enum ByteSearch {
    /// Whether `needle` occurs in `bytes`.
    static func contains(_ bytes: [UInt8], _ needle: [UInt8]) -> Bool { firstIndex(of: needle, in: bytes) != nil }

    /// The offset of the first occurrence of `needle` in `bytes`.
    static func firstIndex(of needle: [UInt8], in bytes: [UInt8]) -> Int? {
        guard let first = needle.first, bytes.count >= needle.count else { return nil }
        return bytes.withUnsafeBufferPointer { haystack in
            let last = haystack.count - needle.count
            var index = 0
            while index <= last {
                if haystack[index] == first && haystack[index..<index + needle.count].elementsEqual(needle) {
                    return index
                }
                index += 1
            }
            return nil
        }
    }
}
