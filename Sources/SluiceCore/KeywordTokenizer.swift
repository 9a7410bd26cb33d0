/// The words keyword rankings index and look up, and snippets look for: lower-cased runs of letters and
/// digits. Scripts written without spaces between words (Han, Hiragana, Katakana) are cut into overlapping
/// pairs of characters (a run of one character is one term), as Lucene's CJK analyzer does: a query's
/// pairs then match a document's without a dictionary of words. Hangul is written with spaces and is
/// read as words.
public enum KeywordTokenizer {
    /// Changes whenever the terms of a text change, so that stored keyword indexes are rebuilt.
    public static let version = 1

    public static func terms(of text: String) -> [String] {
        var terms: [String] = []
        var word = ""
        var run: [Character] = []  // characters of a script without spaces
        func flushWord() {
            if !word.isEmpty { terms.append(word) }
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
                word.append(character)
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
