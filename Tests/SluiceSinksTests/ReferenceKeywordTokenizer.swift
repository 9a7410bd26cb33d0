import Foundation
import SluiceCore

@testable import SluiceSinks

/// The keyword tokenizer as it was before its single pass over the bytes (session 28), kept verbatim as the
/// reference `KeywordTokenizerEqualityTests` compares ``KeywordTokenizer`` with: the terms must not change
/// (the index's bytes and search results depend on them). Its non-ASCII stretches are read by the
/// tokenizer's own ``KeywordTokenizer/characterTerms(of:)``, which that change left as it was
/// (`KeywordSegmentsTests` compares it with the byte path on its own).
enum ReferenceKeywordTokenizer {
    static func terms(of text: String) -> [String] {
        if let terms = text.utf8.withContiguousStorageIfAvailable(mixedTerms) { return terms }
        return KeywordTokenizer.characterTerms(of: text)
    }

    /// The terms of a text in UTF-8: its ASCII stretches read byte by byte (``asciiTerms(_:)``), the rest
    /// character by character, with the terms ``KeywordTokenizer.characterTerms(of:)`` gives the whole text. Most texts are
    /// ASCII but for a few characters (a name, a © sign); reading all of such a text by characters cost
    /// most of the keyword index's tokenizing.
    ///
    /// A stretch ends only before an ASCII byte that is neither a letter nor a digit and follows an ASCII
    /// byte (not the LF of a CR LF): there a character ends (no ASCII character extends the one before,
    /// and a mark that extends the separator belongs to the next stretch with it), and so does a word
    /// (the separator is not part of one). Lower-casing maps each scalar on its own, so a stretch lower-cases
    /// as it does within the whole text.
    static func mixedTerms(_ bytes: UnsafeBufferPointer<UInt8>) -> [String] {
        var terms: [String] = []
        forEachStretch(bytes) { stretch, ascii in
            if ascii, let found = asciiTerms(stretch) {
                terms += found
            } else {
                terms += KeywordTokenizer.characterTerms(of: String(decoding: stretch, as: UTF8.self))
            }
        }
        return terms
    }

    /// Cuts UTF-8 text into the stretches ``mixedTerms(_:)`` reads, in order, each with whether it is ASCII.
    static func forEachStretch(
        _ bytes: UnsafeBufferPointer<UInt8>,
        _ body: (_ stretch: UnsafeBufferPointer<UInt8>, _ ascii: Bool) -> Void
    ) {
        var start = 0
        var ascii = true
        var lastBoundary = 0
        func emit(_ end: Int) {
            guard end > start else { return }
            body(UnsafeBufferPointer(rebasing: bytes[start..<end]), ascii)
        }
        for index in 0..<bytes.count {
            let byte = bytes[index]
            if byte >= 0x80 {
                if ascii {
                    emit(lastBoundary)
                    start = lastBoundary
                    ascii = false
                }
                continue
            }
            let previous = index > 0 ? bytes[index - 1] : 0
            let separator = !((byte >= 0x30 && byte <= 0x39) || ((byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x7A))
            guard index > 0, separator, previous < 0x80, !(previous == 0x0D && byte == 0x0A) else { continue }
            lastBoundary = index
            if !ascii {
                emit(index)
                start = index
                ascii = true
            }
        }
        emit(bytes.count)
    }

    /// The terms of an ASCII text, read byte by byte: the same terms as ``KeywordTokenizer.characterTerms(of:)`` gives it
    /// (in ASCII, letters and digits are the bytes `A`–`Z`, `a`–`z`, `0`–`9`, and no character is unspaced),
    /// several times faster. nil when the text is not ASCII.
    static func asciiTerms(_ bytes: UnsafeBufferPointer<UInt8>) -> [String]? {
        guard bytes.allSatisfy({ $0 < 0x80 }) else { return nil }
        var terms: [String] = []
        var scratch: [UInt8] = []
        forEachASCIITerm(bytes, scratch: &scratch) { terms.append(String(decoding: $0, as: UTF8.self)) }
        return terms
    }

    /// Calls `body` with the UTF-8 bytes of each term of `text`, in order. The bytes are valid only during
    /// the call.
    static func forEachTerm(of text: String, _ body: (UnsafeBufferPointer<UInt8>) -> Void) {
        let done: Void? = text.utf8.withContiguousStorageIfAvailable { bytes in
            var scratch: [UInt8] = []
            forEachStretch(bytes) { stretch, ascii in
                if ascii {
                    forEachASCIITerm(stretch, scratch: &scratch, body)
                } else {
                    for var term in KeywordTokenizer.characterTerms(of: String(decoding: stretch, as: UTF8.self)) {
                        term.withUTF8(body)
                    }
                }
            }
        }
        guard done == nil else { return }
        for var term in KeywordTokenizer.characterTerms(of: text) { term.withUTF8(body) }
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
    static let packedStopWords: [UInt64] = KeywordTokenizer.stopWords.compactMap { packed(Array($0.utf8)) }.sorted()

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

    /// The keyword index's counted terms as `KeywordIndex.forEachCountedTerm` found them: composed bytes,
    /// nil over `KeywordIndex.maxTermBytes`.
    static func forEachCountedTerm(of text: String, _ body: (UnsafeBufferPointer<UInt8>?) -> Void) {
        forEachTerm(of: text) { term in
            if term.allSatisfy({ $0 < 0x80 }) {
                body(term.count <= KeywordIndex.maxTermBytes ? term : nil)
                return
            }
            var composed = String(decoding: term, as: UTF8.self).precomposedStringWithCanonicalMapping
            composed.withUTF8 { body($0.count <= KeywordIndex.maxTermBytes ? $0 : nil) }
        }
    }
}
