/// The words keyword rankings index and look up, and snippets look for: lower-cased runs of letters and
/// digits, Latin letters folded to their base letters (`Bolívar` → `bolivar`, `Straße` → `strasse`:
/// `KeywordTokenizer+Folding.swift`), without stop words, plurals cut to the singular. Scripts written without spaces between words (Han, Hiragana, Katakana) are cut into overlapping
/// pairs of characters (a run of one character is one term), as Lucene's CJK analyzer does: a query's
/// pairs then match a document's without a dictionary of words. Hangul is written with spaces and is
/// read as words.
///
/// English function words (``stopWords``) are left out and plurals are cut to their singular by Harman's
/// S-stemmer ("queries" → "query", "files" → "file", "fixes" → "fixe" alike in query and text): on
/// Benchmarks/retrieval both raised keyword recall@10 (0.837 → 0.894) and nDCG@10 (0.723 → 0.765), while
/// neither alone helped nDCG much. Both are mild enough not to harm other languages' words.
public enum KeywordTokenizer {
    /// Changes whenever the terms of a text change, so that stored keyword indexes are rebuilt (3: Latin
    /// letters folded to their base letters, `KeywordTokenizer+Folding.swift`).
    public static let version = 3

    /// Words too common in questions to say anything about a passage.
    public static let stopWords: Set<String> = [
        "a", "an", "and", "are", "as", "at", "be", "by", "can", "do", "does", "for", "from", "how", "i", "in",
        "is", "it", "my", "of", "on", "or", "that", "the", "this", "to", "what", "when", "where", "which",
        "who", "why", "with", "you",
    ]

    /// Harman's S-stemmer (1991): "ies" → "y", "es" → "e", "s" → "" with its exceptions.
    static func stem(_ word: String) -> String {
        let count = word.count
        if count > 4, word.hasSuffix("ies"), !word.hasSuffix("eies"), !word.hasSuffix("aies") {
            return word.dropLast(3) + "y"
        }
        if count > 3, word.hasSuffix("es"), !word.hasSuffix("aes"), !word.hasSuffix("ees"), !word.hasSuffix("oes") {
            return String(word.dropLast())
        }
        if count > 3, word.hasSuffix("s"), !word.hasSuffix("us"), !word.hasSuffix("ss") {
            return String(word.dropLast())
        }
        return word
    }

    public static func terms(of text: String) -> [String] {
        if let terms = text.utf8.withContiguousStorageIfAvailable(mixedTerms) { return terms }
        return characterTerms(of: text)
    }

    /// The terms of a text in UTF-8: its ASCII stretches read byte by byte (``asciiTerms(_:)``), the rest
    /// character by character, with the terms ``characterTerms(of:)`` gives the whole text. Most texts are
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
                terms += characterTerms(of: String(decoding: stretch, as: UTF8.self))
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

    /// The terms of an ASCII text, read byte by byte: the same terms as ``characterTerms(of:)`` gives it
    /// (in ASCII, letters and digits are the bytes `A`–`Z`, `a`–`z`, `0`–`9`, and no character is unspaced),
    /// several times faster. nil when the text is not ASCII.
    static func asciiTerms(_ bytes: UnsafeBufferPointer<UInt8>) -> [String]? {
        guard bytes.allSatisfy({ $0 < 0x80 }) else { return nil }
        var terms: [String] = []
        var scratch: [UInt8] = []
        forEachASCIITerm(bytes, scratch: &scratch) { terms.append(String(decoding: $0, as: UTF8.self)) }
        return terms
    }

    /// The terms of any text, character by character.
    package static func characterTerms(of text: String) -> [String] {
        var terms: [String] = []
        var word = ""
        var run: [Character] = []  // characters of a script without spaces
        func flushWord() {
            if !word.isEmpty, !stopWords.contains(word) { terms.append(stem(word)) }
            word = ""
        }
        func flushRun() {
            if run.count == 1 {
                terms.append(String(run[0]))
            } else if run.count > 1 {
                for index in 1..<run.count { terms.append(String(run[index - 1]) + String(run[index])) }
            }
            run.removeAll(keepingCapacity: true)
        }
        for character in text.lowercased() {
            if isUnspaced(character) {
                flushWord()
                run.append(character)
            } else if character.isLetter || character.isNumber {
                flushRun()
                appendFolded(character, to: &word)
            } else {
                flushWord()
                flushRun()
            }
        }
        flushWord()
        flushRun()
        return terms
    }

    /// Han ideographs, Hiragana and Katakana.
    static func isUnspaced(_ character: Character) -> Bool {
        guard let scalar = character.unicodeScalars.first else { return false }
        switch scalar.value {
        case 0x3040...0x30FF, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xF900...0xFAFF, 0x20000...0x2FA1F: return true
        default: return false
        }
    }
}
