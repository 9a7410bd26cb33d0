/// The tokenizer's terms as UTF-8 bytes, without making a `String` of each: for an index that counts terms
/// (the local store's keyword index counts every term of every record it writes, and making, hashing and
/// comparing a `String` per term was most of that cost). The terms are exactly those of
/// ``KeywordTokenizer/characterTerms(of:)``, in the same order.
///
/// One pass over the text's bytes. An ASCII word is lower-cased into a scratch buffer as it is read, looked
/// up among the stop words with one multiply (``stopWordSlots``) and stemmed by moving its end: no array
/// grows and no `String` is made. A text is read character by character (``characterTerms(of:)``) only in
/// the stretches around its non-ASCII bytes, cut where a character and a word both end:
/// - a stretch begins at the last ASCII separator before its first non-ASCII byte (the word in progress
///   there is read again as part of it), and ends before the first ASCII byte that is neither a letter nor
///   a digit and follows an ASCII byte (not the LF of a CR LF): no ASCII character extends the one before,
///   and a mark that extends the separator belongs to the next stretch with it;
/// - lower-casing maps each scalar on its own, so a stretch lower-cases as it does within the whole text.
///
/// Measured on the 8 MB doc-files corpus: docs/BENCHMARKS.md, "The keyword tokenizer's CPU, and what the
/// releaser's `madvise`s are".
extension KeywordTokenizer {
    /// Calls `body` with the UTF-8 bytes of each term of `text`, in order. The bytes are valid only during
    /// the call.
    package static func forEachTerm(of text: String, _ body: (UnsafeBufferPointer<UInt8>) -> Void) {
        forEachTermNotingASCII(of: text) { term, _ in body(term) }
    }

    /// Calls `body` with the UTF-8 bytes of each term of `text`, in order, and whether they are all ASCII
    /// (a term that is not needs no composing: it is in every normal form). The bytes are valid only
    /// during the call.
    package static func forEachTermNotingASCII(
        of text: String,
        _ body: (_ term: UnsafeBufferPointer<UInt8>, _ ascii: Bool) -> Void
    ) {
        let done: Void? = text.utf8.withContiguousStorageIfAvailable { bytes in
            guard !bytes.isEmpty else { return }
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: bytes.count) { scratch in
                stopWordSlots.withUnsafeBufferPointer { slots in
                    forEachTerm(bytes, scratch: scratch.baseAddress!, stopWords: slots, body)
                }
            }
        }
        guard done == nil else { return }
        forEachCharacterTerm(of: text, body)
    }

    /// The terms of UTF-8 `bytes`; `scratch` holds at least as many bytes.
    private static func forEachTerm(
        _ bytes: UnsafeBufferPointer<UInt8>,
        scratch: UnsafeMutablePointer<UInt8>,
        stopWords: UnsafeBufferPointer<UInt64>,
        _ body: (UnsafeBufferPointer<UInt8>, Bool) -> Void
    ) {
        let base = bytes.baseAddress!
        let count = bytes.count
        var index = 0
        var boundary = 0  // where a non-ASCII stretch would begin: the last separator that ends a stretch
        while index < count {
            let byte = base[index]
            if isASCIILetterOrDigit(byte) {
                var length = 0
                while index < count, isASCIILetterOrDigit(base[index]) {
                    let letter = base[index]
                    scratch[length] = letter &- 0x41 < 26 ? letter | 0x20 : letter
                    length += 1
                    index += 1
                }
                if index < count, base[index] >= 0x80 {
                    // The word runs on into non-ASCII text: read from the boundary by characters.
                    index = characterStretch(bytes, from: boundary, at: index, body)
                    boundary = index
                    continue
                }
                guard !isStopWord(scratch, length, stopWords) else { continue }
                length = stemmedLength(scratch, length)
                body(UnsafeBufferPointer(start: scratch, count: length), true)
            } else if byte >= 0x80 {
                index = characterStretch(bytes, from: boundary, at: index, body)
                boundary = index
            } else {
                // Every byte before a separator read here is ASCII (a stretch ends after an ASCII byte).
                if index > 0, !(byte == 0x0A && base[index - 1] == 0x0D) { boundary = index }
                index += 1
            }
        }
    }

    /// Reads the non-ASCII stretch that begins at `start` and holds the non-ASCII byte at `index` by
    /// characters; returns where it ends (the separator the ASCII reading resumes at, or the text's end).
    private static func characterStretch(
        _ bytes: UnsafeBufferPointer<UInt8>,
        from start: Int,
        at index: Int,
        _ body: (UnsafeBufferPointer<UInt8>, Bool) -> Void
    ) -> Int {
        var end = index + 1
        while end < bytes.count {
            let byte = bytes[end]
            let previous = bytes[end - 1]
            if byte < 0x80, !isASCIILetterOrDigit(byte), previous < 0x80, !(previous == 0x0D && byte == 0x0A) {
                break
            }
            end += 1
        }
        forEachCharacterTerm(
            of: String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self),
            body
        )
        return end
    }

    /// The terms of ``characterTerms(of:)``, as bytes.
    private static func forEachCharacterTerm(of text: String, _ body: (UnsafeBufferPointer<UInt8>, Bool) -> Void) {
        for var term in characterTerms(of: text) {
            term.withUTF8 { body($0, $0.allSatisfy { $0 < 0x80 }) }
        }
    }

    /// `A`–`Z`, `a`–`z`, `0`–`9`.
    @inline(__always)
    static func isASCIILetterOrDigit(_ byte: UInt8) -> Bool {
        byte &- 0x30 < 10 || (byte | 0x20) &- 0x61 < 26
    }

    /// Whether the lower-cased ASCII word of `length` bytes at `word` is one of ``stopWords``.
    @inline(__always)
    private static func isStopWord(
        _ word: UnsafeMutablePointer<UInt8>,
        _ length: Int,
        _ slots: UnsafeBufferPointer<UInt64>
    ) -> Bool {
        guard length <= 8 else { return false }
        var value: UInt64 = 0
        for index in 0..<length { value |= UInt64(word[index]) << (8 * UInt64(index)) }
        var slot = stopWordSlot(value, slots.count)
        while slots[slot] != 0 {
            if slots[slot] == value { return true }
            slot = (slot + 1) & (slots.count - 1)
        }
        return false
    }

    /// The stop words (all of them ASCII, at most 8 bytes: checked where it is built), each packed into an
    /// integer (the first byte lowest) in an open-addressing table of 128 slots, 0 where empty.
    static let stopWordSlots: [UInt64] = {
        var slots = [UInt64](repeating: 0, count: 128)
        for word in stopWords {
            let bytes = Array(word.utf8)
            precondition(bytes.count <= 8 && bytes.allSatisfy { $0 < 0x80 }, "stop word \(word) not packable")
            var value: UInt64 = 0
            for (index, byte) in bytes.enumerated() { value |= UInt64(byte) << (8 * UInt64(index)) }
            var slot = stopWordSlot(value, slots.count)
            while slots[slot] != 0 { slot = (slot + 1) & (slots.count - 1) }
            slots[slot] = value
        }
        return slots
    }()

    /// The first slot of a packed word in a table of `count` slots (a power of two).
    @inline(__always)
    private static func stopWordSlot(_ value: UInt64, _ count: Int) -> Int {
        Int(truncatingIfNeeded: (value &* 0x9E37_79B9_7F4A_7C15) >> 57) & (count - 1)
    }

    /// ``stem(_:)`` of a lower-cased ASCII word in place (in ASCII a character is a byte); returns its new
    /// length.
    @inline(__always)
    private static func stemmedLength(_ word: UnsafeMutablePointer<UInt8>, _ length: Int) -> Int {
        guard length > 3, word[length - 1] == UInt8(ascii: "s") else { return length }
        let before = word[length - 2]
        if length > 4, before == UInt8(ascii: "e"), word[length - 3] == UInt8(ascii: "i") {
            let fourth = word[length - 4]
            if fourth != UInt8(ascii: "e"), fourth != UInt8(ascii: "a") {
                word[length - 3] = UInt8(ascii: "y")
                return length - 2
            }
        }
        if before == UInt8(ascii: "e") {
            let third = word[length - 3]
            if third != UInt8(ascii: "a"), third != UInt8(ascii: "e"), third != UInt8(ascii: "o") { return length - 1 }
        }
        if before != UInt8(ascii: "u"), before != UInt8(ascii: "s") { return length - 1 }
        return length
    }
}
