import Foundation
import SluiceCore
import SluiceTesting
import Testing

@testable import SluiceSinks

/// The keyword index folds Latin letters to their base letters on both sides (``KeywordTokenizer``,
/// `KeywordTokenizer+Folding.swift`): `bolivar` finds `Bolívar` and `Bolívar` finds `bolivar`, while other
/// scripts, and ASCII codes, keep their terms.
@Suite struct KeywordFoldingTests {
    typealias Keyword = LocalSinkKeywordTests

    @Test(
        "Latin letters fold to their base letters; Greek, Cyrillic and CJK are kept",
        arguments: [
            ("Bolívar Soberano", ["bolivar", "soberano"]),
            ("café CAFÉ Café", ["cafe", "cafe", "cafe"]),
            ("naïve façade", ["naive", "facade"]),
            ("München Straße", ["munchen", "strasse"]),
            ("Ærø Łódź Đorđević Þór Øresund", ["aero", "lodz", "dordevic", "thor", "oresund"]),
            ("İstanbul ılık", ["istanbul", "ilik"]),
            ("Việt Nam", ["viet", "nam"]),
            ("conﬁguration ﬂag", ["configuration", "flag"]),
            // Decomposed input (macOS file names, some PDFs): the marks are separate scalars.
            ("Boli\u{301}var cafe\u{301}", ["bolivar", "cafe"]),
            ("Αθήνα Ελλάδα", ["αθήνα", "ελλάδα"]),
            ("Москва йогурт ёлка", ["москва", "йогурт", "ёлка"]),
            ("東京都", ["東京", "京都"]),
            ("한국어", ["한국어"]),
        ]
    )
    func folds(text: String, expected: [String]) {
        #expect(KeywordTokenizer.terms(of: text) == expected)
        #expect(KeywordTokenizer.characterTerms(of: text) == expected)
        var bytes: [[UInt8]] = []
        KeywordTokenizer.forEachTerm(of: text) { bytes.append(Array($0)) }
        #expect(bytes == expected.map { Array($0.utf8) })
    }

    @Test(
        "ASCII text keeps its terms: codes, version strings, identifiers",
        arguments: [
            ("DEVRANDOM_WAIT", ["devrandom", "wait"]),
            ("xz 5.6.1 and liblzma 5.4.6-r1", ["xz", "5", "6", "1", "liblzma", "5", "4", "6", "r1"]),
            ("ISO 4217 VED VES 928", ["iso", "4217", "ved", "ves", "928"]),
        ]
    )
    func asciiUnchanged(text: String, expected: [String]) {
        #expect(KeywordTokenizer.terms(of: text) == expected)
        #expect(KeywordTokenizer.characterTerms(of: text) == expected)
    }

    static let records = [
        Keyword.record("ved", "VED: Bolívar Soberano, numeric 926"),
        Keyword.record("cafe", "The café on the corner serves naïve art lovers."),
        Keyword.record("munich", "München is the capital of Bavaria; Straße means street."),
        Keyword.record("athens", "Αθήνα είναι η πρωτεύουσα της Ελλάδας."),
        Keyword.record("moscow", "Москва — столица России."),
        Keyword.record("code", "Set DEVRANDOM_WAIT to block until the pool is ready (since 5.6.1)."),
        Keyword.record("plain", "A plain bolivar-free text about coffee and cafeterias."),
    ]

    @Test(
        "the local store finds accented words by their folded form and the other way round",
        arguments: [
            ("bolivar", "ved"), ("Bolívar", "ved"), ("BOLIVAR soberano", "ved"),
            ("cafe", "cafe"), ("café", "cafe"), ("naive", "cafe"), ("naïve", "cafe"),
            ("Munchen", "munich"), ("münchen", "munich"), ("strasse", "munich"), ("Straße", "munich"),
            ("Αθήνα", "athens"), ("αθήνα", "athens"), ("Москва", "moscow"), ("москва", "moscow"),
            ("DEVRANDOM_WAIT", "code"), ("5.6.1", "code"),
        ]
    )
    func localStoreFolds(query: String, expected: String) async throws {
        try await Self.withStore { sink in
            let hits = try await Keyword.keyword(sink, query)
            #expect(hits.first?.record.id.rawValue == expected, "\(query): \(hits.map(\.record.id.rawValue))")
            try await Keyword.expectSameRanking(sink, query, Self.records)
        }
    }

    @Test("a Greek or Cyrillic word is not folded into a Latin one")
    func otherScriptsStayApart() async throws {
        try await Self.withStore { sink in
            let latin = try await Keyword.keyword(sink, "athina moskva")
            let unaccented = try await Keyword.keyword(sink, "αθηνα")
            #expect(latin.isEmpty)
            #expect(unaccented.isEmpty, "Greek keeps its accents")
        }
    }

    /// Runs `body` on a new local store holding ``records``, removed afterwards.
    static func withStore(_ body: (LocalSink) async throws -> Void) async throws {
        let dir = Keyword.directory()
        defer { TemporaryDirectory.remove(dir) }
        let sink = try LocalSink(directory: dir)
        try await sink.upsert(records)
        try await body(sink)
    }
}
