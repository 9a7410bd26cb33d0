import Foundation
import SluiceCore

/// Counting a text's terms for the keyword index: the tokenizer's terms as bytes
/// (``KeywordTokenizer/forEachTerm(of:_:)``) into a ``KeywordTermTable``, so that no `String` is made or
/// hashed per term. A record the store writes is counted straight into its segment's table instead
/// (`KeywordIndex+SegmentBuilder.swift`) unless it is scored by its rows or records; a search's query and
/// a scan count with ``KeywordIndex/Counts``. The terms are written as the same bytes a `String` of them
/// would give.
extension KeywordIndex {
    /// A text's indexed terms with their frequencies, and its length in terms (every term counts, indexed
    /// or not: a term over ``KeywordIndex/maxTermBytes`` counts in the length only).
    struct Counts {
        /// The distinct indexed terms, numbered in the order first met.
        var table = KeywordTermTable()
        /// The frequency of each term of `table`, by number.
        var frequencies: [Int] = []
        var length = 0
        /// The rows or records it is scored by, nil when it is scored whole (`KeywordIndex+Units.swift`).
        var units: Units?

        /// The frequency of `term`, nil if the text does not hold it.
        func frequency(of term: String) -> Int? {
            var term = term.unicodeScalars.allSatisfy(\.isASCII) ? term : term.precomposedStringWithCanonicalMapping
            return term.withUTF8 { table.number(of: $0) }.map { frequencies[$0] }
        }

        /// Counts one occurrence of `term` (composed bytes, at most ``KeywordIndex/maxTermBytes``).
        fileprivate mutating func add(_ term: UnsafeBufferPointer<UInt8>) {
            let found = table.insert(term)
            if found.inserted {
                frequencies.append(1)
            } else {
                frequencies[found.number] += 1
            }
        }

        /// The postings a search reads of `term`: one per unit holding it (unit 0, the whole text, for a
        /// record scored whole), with the term's frequency and the unit's length; empty if it is absent.
        func postings(of term: String) -> [(unit: Int, frequency: Int, length: Int)] {
            var term = term.unicodeScalars.allSatisfy(\.isASCII) ? term : term.precomposedStringWithCanonicalMapping
            guard let number = term.withUTF8({ table.number(of: $0) }) else { return [] }
            return units?.postings(of: number) ?? [(0, frequencies[number], length)]
        }

        /// The distinct indexed terms, as strings.
        var terms: [String] { (0..<table.count).map { String(decoding: table.term($0), as: UTF8.self) } }
    }

    static func counts(of text: String) -> Counts {
        var counts = Counts()
        forEachCountedTerm(of: text) { term in
            counts.length += 1
            if let term { counts.add(term) }
        }
        return counts
    }

    /// Calls `body` with each term of `text` as the index counts it: its composed bytes, or nil for a term
    /// over ``KeywordIndex/maxTermBytes`` (it counts in a length, and is not indexed).
    static func forEachCountedTerm(of text: String, _ body: (UnsafeBufferPointer<UInt8>?) -> Void) {
        KeywordTokenizer.forEachTermNotingASCII(of: text) { term, ascii in
            if ascii {
                body(term.count <= maxTermBytes ? term : nil)
                return
            }
            var composed = String(decoding: term, as: UTF8.self).precomposedStringWithCanonicalMapping
            composed.withUTF8 { body($0.count <= maxTermBytes ? $0 : nil) }
        }
    }
}
