/// The tokenizer's terms as UTF-8 bytes, without making a `String` of each: for an index that counts terms
/// (the local store's keyword index counts every term of every record it writes, and making, hashing and
/// comparing a `String` per term was most of that cost). The terms are exactly those of
/// ``KeywordTokenizer/terms(of:)``, in the same order.
extension KeywordTokenizer {
    /// Calls `body` with the UTF-8 bytes of each term of `text`, in order. The bytes are valid only during
    /// the call.
    package static func forEachTerm(of text: String, _ body: (UnsafeBufferPointer<UInt8>) -> Void) {
        let done: Void? = text.utf8.withContiguousStorageIfAvailable { bytes in
            var scratch: [UInt8] = []
            forEachStretch(bytes) { stretch, ascii in
                if ascii {
                    forEachASCIITerm(stretch, scratch: &scratch, body)
                } else {
                    for var term in characterTerms(of: String(decoding: stretch, as: UTF8.self)) {
                        term.withUTF8(body)
                    }
                }
            }
        }
        guard done == nil else { return }
        for var term in characterTerms(of: text) { term.withUTF8(body) }
    }

    /// The terms of an ASCII stretch, as ``asciiTerms(_:)`` finds them, lower-cased and stemmed in `scratch`.
    static func forEachASCIITerm(
        _ bytes: UnsafeBufferPointer<UInt8>,
        scratch: inout [UInt8],
        _ body: (UnsafeBufferPointer<UInt8>) -> Void
    ) {
        var start = -1
        func flush(_ end: Int) {
            guard start >= 0 else { return }
            scratch.removeAll(keepingCapacity: true)
            for index in start..<end {
                let byte = bytes[index]
                scratch.append(byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte)
            }
            start = -1
            guard !isStopWord(scratch) else { return }
            stemASCII(&scratch)
            scratch.withUnsafeBufferPointer(body)
        }
        for index in 0..<bytes.count {
            let byte = bytes[index]
            let alphanumeric = (byte >= 0x30 && byte <= 0x39) || ((byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x7A)
            if alphanumeric {
                if start < 0 { start = index }
            } else {
                flush(index)
            }
        }
        flush(bytes.count)
    }

    /// The stop words of up to 8 ASCII bytes (all of them), each packed into an integer, sorted.
    static let packedStopWords: [UInt64] = stopWords.compactMap { packed(Array($0.utf8)) }.sorted()

    /// Up to 8 bytes as one integer (the first byte lowest), nil for more.
    static func packed(_ word: [UInt8]) -> UInt64? {
        guard word.count <= 8 else { return nil }
        var value: UInt64 = 0
        for (index, byte) in word.enumerated() { value |= UInt64(byte) << (8 * UInt64(index)) }
        return value
    }

    /// Whether lower-cased ASCII `word` is one of ``stopWords``.
    static func isStopWord(_ word: [UInt8]) -> Bool {
        guard let value = packed(word) else { return false }
        var low = 0
        var high = packedStopWords.count
        while low < high {
            let middle = (low + high) / 2
            if packedStopWords[middle] < value { low = middle + 1 } else { high = middle }
        }
        return low < packedStopWords.count && packedStopWords[low] == value
    }

    /// ``stem(_:)`` of a lower-cased ASCII word, in place (in ASCII a character is a byte).
    static func stemASCII(_ word: inout [UInt8]) {
        func ends(_ suffix: StaticString) -> Bool {
            let length = suffix.utf8CodeUnitCount
            guard word.count >= length else { return false }
            let offset = word.count - length
            for index in 0..<length where word[offset + index] != suffix.utf8Start[index] { return false }
            return true
        }
        let count = word.count
        if count > 4, ends("ies"), !ends("eies"), !ends("aies") {
            word.removeLast(2)
            word[word.count - 1] = UInt8(ascii: "y")
        } else if count > 3, ends("es"), !ends("aes"), !ends("ees"), !ends("oes") {
            word.removeLast()
        } else if count > 3, ends("s"), !ends("us"), !ends("ss") {
            word.removeLast()
        }
    }
}
