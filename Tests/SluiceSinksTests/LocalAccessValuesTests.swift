import Foundation
import SluiceCore
import SluiceTesting
import Testing

@testable import SluiceSinks

/// A restricted search tests only the readers lists its caller's names are in, and finds exactly the lists that
/// testing every one would allow: numbers, times and lists among the values, and any shape of condition.
@Suite struct LocalAccessValuesTests {
    /// Every value a restricted search may meet: texts, lists, a text that is a time, numbers, a time, a flag, none.
    static let pool: [MetadataValue?] = [
        nil, .string("alice"), .string("bob"), .string("*"), .strings(["alice", "team-a"]), .strings(["bob", "bob"]),
        .strings([]), .strings(["team-a", "*"]), .string("2026-01-01T00:00:00Z"),
        .strings(["2026-01-01T00:00:00Z", "carol"]), .int(7), .double(7), .string("7"), .bool(true),
        .time(Date(timeIntervalSince1970: 1_767_225_600)), .string("e\u{301}"), .string("\u{e9}"),
    ]

    /// Texts and other values a condition may name.
    static let named: [MetadataValue] = [
        .string("alice"), .string("bob"), .string("*"), .string("team-a"), .string("nobody"),
        .string("2026-01-01T00:00:00Z"), .int(7), .string("7"), .bool(true), .string("\u{e9}"),
    ]

    static func brute(_ values: LocalAccessValues, _ conditions: [SearchFilter]) -> [UInt8] {
        (0..<values.count).map { index in
            guard index > 0 else { return 0 }
            let value = values.values[index]
            return conditions.allSatisfy { $0.matches { $0 == "readers" ? value : nil } } ? 1 : 0
        }
    }

    @Test("the lists found through the texts are the lists that testing every one allows", arguments: 0..<8)
    func sameAsTestingEvery(seed: UInt64) {
        var random = SplitMix64(seed: 0xACCE55 + seed)
        var values = LocalAccessValues()
        for value in Self.pool.shuffled(using: &random) { _ = values.number(of: value) }
        for _ in 0..<300 {
            var conditions: [SearchFilter] = []
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                let some = (0..<Int.random(in: 1...3, using: &random)).map { _ in
                    Self.named.randomElement(using: &random)!
                }
                switch Int.random(in: 0..<5, using: &random) {
                case 0, 1: conditions.append(.oneOf("readers", some))
                case 2: conditions.append(.compare("readers", .equal, some[0]))
                case 3: conditions.append(.compare("readers", .notEqual, some[0]))
                default: conditions.append(.exists("readers"))
                }
            }
            #expect(
                values.allowed(by: conditions, field: "readers") == Self.brute(values, conditions),
                "\(conditions)"
            )
        }
    }

    @Test("with a list for every person, a caller's restriction tests the lists holding its names alone")
    func narrowedByName() {
        var values = LocalAccessValues()
        for person in 0..<20_000 {
            _ = values.number(of: .strings(["team-\(person % 10)", "user-\(person)"]))
        }
        _ = values.number(of: .strings(["*"]))
        let caller: [SearchFilter] = [.oneOf("readers", [.string("user-7"), .string("*")])]
        #expect(values.candidates(for: caller, field: "readers")?.count == 2)
        let allowed = values.allowed(by: caller, field: "readers")
        #expect(allowed == Self.brute(values, caller))
        #expect(allowed.reduce(0) { $0 + Int($1) } == 2)
        // The narrowest condition is the one used: a team and a person.
        let both: [SearchFilter] = [
            .oneOf("readers", [.string("team-3")]), .compare("readers", .equal, .string("user-13")),
        ]
        #expect(values.candidates(for: both, field: "readers")?.count == 1)
        #expect(values.allowed(by: both, field: "readers") == Self.brute(values, both))
        // A time, a number or no text at all leaves every list to test.
        #expect(values.candidates(for: [.oneOf("readers", [.string("2026-01-01T00:00:00Z")])], field: "readers") == nil)
        #expect(values.candidates(for: [.oneOf("readers", [.int(7), .string("user-1")])], field: "readers") == nil)
        #expect(values.candidates(for: [.exists("readers")], field: "readers") == nil)
    }
}

extension LocalAccessValuesTests {
    @Test("texts that differ in their bytes are different values, though Swift calls them equal (NFC and NFD)")
    func byBytes() {
        var values = LocalAccessValues()
        let composed = values.number(of: .string("jos\u{e9}"))
        let decomposed = values.number(of: .string("jose\u{301}"))
        #expect(composed != decomposed)
        #expect(values.number(of: .strings(["jos\u{e9}"])) != values.number(of: .strings(["jose\u{301}"])))
        #expect(values.number(of: .string("jos\u{e9}")) == composed)
        let caller: [SearchFilter] = [.oneOf("readers", [.string("jos\u{e9}")])]
        let allowed = values.allowed(by: caller, field: "readers")
        #expect(allowed[Int(composed)] == 1)
        #expect(allowed[Int(decomposed)] == 0)
    }
}
