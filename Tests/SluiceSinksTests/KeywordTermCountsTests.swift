import SluiceCore
import SluiceTesting
import Testing

@testable import SluiceSinks

/// The keyword index counts terms as bytes (``KeywordTokenizer/forEachTerm(of:_:)`` into a
/// ``KeywordTermTable``), not as strings: it must count exactly the terms the string tokenizer gives.
@Suite struct KeywordTermCountsTests {
    static let pieces = [
        "The", "invoices", "CHF-120", "x86_64", "A", "an", "IS", "queries", "status", "class", "bus", "Fixes",
        "eies", "aies", "cookies", "shoes", "trees", "toes", "ies", "ses", "es", "s", "gas", "WHERE", "Which",
        "é", "\r\n", "\t", " ", ".", "?!", "0", "99", "users'", "o'clock", "ÉTÉ", "東京", "word",
        "e\u{301}", " \u{301}x", "ΟΔΟΣ", "İstanbul", "straße", "ﬁle", "한국어", "カタカナabc",
        String(repeating: "long", count: 60),  // a term over maxTermBytes: counted in the length only
    ]

    static func texts(seed: UInt64) -> [String] {
        var generator = SplitMix64(seed: seed)
        return (0..<300).map { _ in
            (0..<Int(generator.next() % 40)).map { _ in pieces[Int(generator.next() % UInt64(pieces.count))] }
                .joined(separator: generator.next() % 2 == 0 ? " " : "")
        }
    }

    @Test("the byte tokenizer gives the string tokenizer's terms, in order", arguments: [1, 2, 3, 4, 5])
    func bytesMatchStrings(seed: UInt64) {
        for text in Self.texts(seed: seed) {
            var bytes: [[UInt8]] = []
            KeywordTokenizer.forEachTerm(of: text) { bytes.append(Array($0)) }
            #expect(bytes == KeywordTokenizer.terms(of: text).map { Array($0.utf8) }, "\(text)")
        }
    }

    @Test("a text's counts are its terms' frequencies and its length in terms", arguments: [6, 7, 8])
    func countsMatchDictionary(seed: UInt64) {
        for text in Self.texts(seed: seed) {
            let terms = KeywordTokenizer.terms(of: text)
            var expected: [String: Int] = [:]
            for term in terms where term.utf8.count <= KeywordIndex.maxTermBytes { expected[term, default: 0] += 1 }
            let counts = KeywordIndex.counts(of: text)
            #expect(counts.length == terms.count)
            #expect(Set(counts.terms) == Set(expected.keys) && counts.terms.count == expected.count, "\(text)")
            for (term, frequency) in expected { #expect(counts.frequency(of: term) == frequency, "\(term)") }
            #expect(counts.frequency(of: "absent-term") == nil)
        }
    }

    @Test("the term table numbers terms in order, finds every one after growing, and tells similar ones apart")
    func tableGrows() {
        var table = KeywordTermTable()
        let terms = (0..<5000).map { Array("t\($0)".utf8) } + [[], [0x61], [0x61, 0x61]]
        for (number, term) in terms.enumerated() {
            let found = term.withUnsafeBufferPointer { table.insert($0) }
            #expect(found.number == number && found.inserted)
        }
        #expect(table.count == terms.count)
        for (number, term) in terms.enumerated() {
            let again = term.withUnsafeBufferPointer { table.insert($0) }
            #expect(again.number == number && !again.inserted)
            #expect(term.withUnsafeBufferPointer { table.number(of: $0) } == number)
            #expect(Array(table.term(number)) == term)
        }
        #expect(Array("t5000".utf8).withUnsafeBufferPointer { table.number(of: $0) } == nil)
    }
}
