import Foundation

/// BERT's uncased text normalization and pre-tokenization, as the Hugging Face fast tokenizer does it
/// (`BertNormalizer` with clean_text, handle_chinese_chars, strip_accents and lowercase, then
/// `BertPreTokenizer`), one Unicode scalar at a time:
///
/// 1. Clean: U+0000, U+FFFD and "control" characters are dropped, white space becomes a space. Tab,
///    line feed and carriage return count as white space; every other character of the categories
///    Cc, Cf, Co and Cs counts as control (so U+000B, U+0085, zero-width joiners, soft hyphens,
///    byte-order marks and private-use characters vanish).
/// 2. CJK ideographs (the blocks BERT lists) get a space on either side.
/// 3. Accents: canonical decomposition (NFD), then nonspacing marks (Mn) are dropped.
/// 4. Lower-casing, character by character (`İ` has already lost its dot in step 3).
/// 5. Pre-tokenization: white space separates words; each punctuation character (ASCII punctuation or
///    a Unicode P* category) is a word of its own.
///
/// The category tests that `tokenizers` takes from the `unicode_categories` crate use Unicode 8.0
/// tables: a character assigned later is in none of its categories, so it is never dropped as control,
/// never punctuation and never a stripped mark (it usually ends up as `[UNK]`).
/// ``isAssignedByUnicode8(_:)`` reproduces that.
enum BertNormalization {
    /// What one input scalar contributes to the pre-tokenizer.
    enum Piece {
        /// A word character (appended to the current word).
        case word
        /// Ends the current word.
        case separator
        /// Ends the current word and is a word of its own.
        case punctuation
    }

    /// Calls `emit` for each normalized scalar `scalar` turns into, with its role in pre-tokenization.
    @inline(__always)
    static func normalize(_ scalar: Unicode.Scalar, _ emit: (Unicode.Scalar, Piece) -> Void) {
        let value = scalar.value
        if value < 0x80 {
            switch value {
            case 0x09, 0x0A, 0x0D, 0x20: emit(" ", .separator)
            case 0x00..<0x20, 0x7F: return
            case 0x41...0x5A: emit(Unicode.Scalar(value + 0x20)!, .word)
            case 0x30...0x39, 0x61...0x7A: emit(scalar, .word)
            default: emit(scalar, .punctuation)
            }
            return
        }
        if value == 0xFFFD || isControl(scalar) { return }
        if scalar.properties.isWhitespace {
            emit(" ", .separator)
            return
        }
        let chinese = isChineseCharacter(value)
        if chinese { emit(" ", .separator) }
        for decomposed in canonicalDecomposition(scalar) where !isNonspacingMark(decomposed) {
            for lower in lowercase(decomposed) {
                emit(lower, role(of: lower))
            }
        }
        if chinese { emit(" ", .separator) }
    }

    /// The pre-tokenizer's view of a normalized scalar.
    @inline(__always)
    static func role(of scalar: Unicode.Scalar) -> Piece {
        if scalar.properties.isWhitespace { return .separator }
        return isPunctuation(scalar) ? .punctuation : .word
    }

    /// ASCII punctuation, or a character of a Unicode punctuation category (as of Unicode 8.0).
    static func isPunctuation(_ scalar: Unicode.Scalar) -> Bool {
        let value = scalar.value
        if value < 0x80 {
            return (0x21...0x2F).contains(value) || (0x3A...0x40).contains(value) || (0x5B...0x60).contains(value)
                || (0x7B...0x7E).contains(value)
        }
        guard isAssignedByUnicode8(scalar) else { return false }
        switch scalar.properties.generalCategory {
        case .connectorPunctuation, .dashPunctuation, .openPunctuation, .closePunctuation, .initialPunctuation,
            .finalPunctuation, .otherPunctuation:
            return true
        default:
            return false
        }
    }

    /// A "control" character for the cleaning step: categories Cc, Cf, Co, Cs or Cn (as of Unicode 8.0),
    /// except tab, line feed and carriage return.
    static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x09, 0x0A, 0x0D: return false
        default: break
        }
        guard isAssignedByUnicode8(scalar) else { return false }
        switch scalar.properties.generalCategory {
        case .control, .format, .privateUse, .surrogate: return true
        default: return false
        }
    }

    /// A nonspacing mark (Mn) as of Unicode 8.0.
    static func isNonspacingMark(_ scalar: Unicode.Scalar) -> Bool {
        let value = scalar.value
        guard value >= 0x300 else { return false }
        // Characters whose category changed after Unicode 8.0: U+1734 became Mc (was Mn); U+1885 and
        // U+1886 became Mn (were Lo); U+A9BD became Mn (was Mc).
        if value == 0x1734 { return true }
        if value == 0x1885 || value == 0x1886 || value == 0xA9BD { return false }
        return scalar.properties.generalCategory == .nonspacingMark && isAssignedByUnicode8(scalar)
    }

    /// Whether the character existed in Unicode 8.0, the version of the tables `tokenizers` takes from
    /// the `unicode_categories` crate (found by the parity sweep over every code point: characters of
    /// Unicode 9.0 already fail its tests).
    static func isAssignedByUnicode8(_ scalar: Unicode.Scalar) -> Bool {
        guard let age = scalar.properties.age else { return false }
        return age.major < 8 || (age.major == 8 && age.minor == 0)
    }

    /// The CJK blocks BERT surrounds with spaces.
    static func isChineseCharacter(_ value: UInt32) -> Bool {
        (0x4E00...0x9FFF).contains(value) || (0x3400...0x4DBF).contains(value)
            || (0x20000...0x2A6DF).contains(value) || (0x2A700...0x2B73F).contains(value)
            || (0x2B740...0x2B81F).contains(value) || (0x2B920...0x2CEAF).contains(value)
            || (0xF900...0xFAFF).contains(value) || (0x2F800...0x2FA1F).contains(value)
    }

    /// The canonical decomposition (NFD) of one scalar.
    static func canonicalDecomposition(_ scalar: Unicode.Scalar) -> String.UnicodeScalarView {
        // Hangul syllables decompose algorithmically, which is exact and avoids Foundation.
        let value = scalar.value
        if (0xAC00...0xD7A3).contains(value) {
            let index = value - 0xAC00
            var view = String.UnicodeScalarView()
            view.append(Unicode.Scalar(0x1100 + index / 588)!)
            view.append(Unicode.Scalar(0x1161 + (index % 588) / 28)!)
            if index % 28 != 0 { view.append(Unicode.Scalar(0x11A7 + index % 28)!) }
            return view
        }
        return String(String.UnicodeScalarView([scalar])).decomposedStringWithCanonicalMapping.unicodeScalars
    }

    /// The full lower-case mapping of one scalar (one or more scalars).
    static func lowercase(_ scalar: Unicode.Scalar) -> String.UnicodeScalarView {
        let properties = scalar.properties
        if !properties.changesWhenLowercased { return String.UnicodeScalarView([scalar]) }
        return properties.lowercaseMapping.unicodeScalars
    }
}
