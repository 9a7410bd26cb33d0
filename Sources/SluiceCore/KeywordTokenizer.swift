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

    /// The terms of `text`, in order (`forEachTerm(of:_:)`: its ASCII words read byte by byte, the
    /// stretches around non-ASCII bytes character by character, `characterTerms(of:)`).
    public static func terms(of text: String) -> [String] {
        var terms: [String] = []
        forEachTermNotingASCII(of: text) { term, _ in terms.append(String(decoding: term, as: UTF8.self)) }
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
