import Foundation

/// Folding Latin letters to their base letters, as the keyword index sees words on both sides (what it
/// indexes and what it is asked): `Bolívar` → `bolivar`, `café` → `cafe`, `naïve` → `naive`, `München` →
/// `munchen`, `Straße` → `strasse`. A query typed without accents then finds the accented text and the
/// other way round.
///
/// The rule is that of Lucene's `ASCIIFoldingFilter` and Elasticsearch's `asciifolding` token filter for
/// Latin letters: a letter's canonical decomposition (NFD) without its combining marks, and for the letters
/// that do not decompose, ``foldedLetters``. German umlauts fold to their base vowel (`ü` → `u`), as those
/// filters do, not to the German spelling without umlauts (`ü` → `ue`, Lucene's
/// `GermanNormalizationFilter`): `Munchen` finds `München`, `Muenchen` does not.
///
/// Only Latin letters fold (base letters `A`–`Z`, U+00C0–U+024F, U+1E00–U+1EFF, and the Latin ligatures
/// U+FB00–U+FB06). Other scripts keep their letters and marks: in Greek, Cyrillic, Devanagari or kana a mark
/// or a decomposing letter is often a letter of its own (`й` is not `и`), and those filters leave them too.
///
/// Cost: ASCII text never reaches the fold (the tokenizer reads ASCII stretches byte by byte,
/// ``KeywordTokenizer/forEachTerm(of:_:)``); a non-ASCII character costs one dictionary look-up.
extension KeywordTokenizer {
    /// Latin letters that have no canonical decomposition, and what they fold to (lower case; the
    /// tokenizer lower-cases first). As Lucene's `ASCIIFoldingFilter` maps them.
    public static let foldedLetters: [Unicode.Scalar: String] = [
        "ß": "ss", "æ": "ae", "œ": "oe", "ø": "o", "ł": "l", "đ": "d", "ð": "d", "þ": "th", "ı": "i",
        "ħ": "h", "ŧ": "t", "ŋ": "n", "ſ": "s", "ĳ": "ij", "ŀ": "l", "ƀ": "b", "ƚ": "l", "ɨ": "i",
        "ﬀ": "ff", "ﬁ": "fi", "ﬂ": "fl", "ﬃ": "ffi", "ﬄ": "ffl", "ﬅ": "st", "ﬆ": "st",
    ]

    /// Every non-ASCII Latin letter that folds, with its folded form: ``foldedLetters``, and the letters
    /// whose canonical decomposition holds combining marks, without the marks (a base letter of
    /// ``foldedLetters`` folded too: `ǿ` → `ø` → `o`).
    static let latinFolds: [Unicode.Scalar: String] = {
        var folds = foldedLetters
        let ranges: [ClosedRange<UInt32>] = [0xC0...0x24F, 0x1E00...0x1EFF]
        for value in ranges.joined() {
            guard let scalar = Unicode.Scalar(value), folds[scalar] == nil,
                scalar.properties.isAlphabetic
            else { continue }
            let decomposed = String(Character(scalar)).decomposedStringWithCanonicalMapping.unicodeScalars
            guard decomposed.count > 1 else { continue }
            folds[scalar] = foldedBase(decomposed)
        }
        return folds
    }()

    /// The scalars of a decomposed Latin letter without its combining marks, each folded.
    private static func foldedBase(_ scalars: String.UnicodeScalarView) -> String {
        var folded = ""
        for scalar in scalars where scalar.properties.generalCategory != .nonspacingMark {
            if let letters = foldedLetters[scalar] {
                folded += letters
            } else {
                folded.unicodeScalars.append(scalar)
            }
        }
        return folded
    }

    /// Whether `scalar` is a Latin letter the fold reads (ASCII letters included: `e` + U+0301 is `é`
    /// decomposed).
    static func isLatin(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x41...0x5A, 0x61...0x7A, 0xC0...0x24F, 0x1E00...0x1EFF, 0xFB00...0xFB06: return true
        default: return false
        }
    }

    /// Appends the lower-cased letter or digit `character` to `word`, folded if it is a Latin letter.
    static func appendFolded(_ character: Character, to word: inout String) {
        if character.isASCII {
            word.append(character)
            return
        }
        let scalars = character.unicodeScalars
        guard let first = scalars.first, isLatin(first) else {
            word.append(character)
            return
        }
        if let folded = latinFolds[first] {
            word += folded
        } else {
            word.unicodeScalars.append(first)
        }
        // A decomposed letter's marks (`e` + U+0301), or marks added to a composed one.
        for scalar in scalars.dropFirst() where scalar.properties.generalCategory != .nonspacingMark {
            word.unicodeScalars.append(scalar)
        }
    }
}
