import Foundation
import SluiceCore
import Testing

/// The bounds of filters (``FilterLimits``): nesting and conditions, refused with a usage error by both
/// readers without deep recursion; what a store cannot hold (NUL); and text compared by its bytes.
@Suite struct SearchFilterLimitsTests {
    static func record(key: String, ordinal: Int = 0) -> VectorRecord {
        VectorRecord(
            id: VectorID(rawValue: "r"),
            documentKey: key,
            ordinal: ordinal,
            text: "",
            vector: [],
            metadata: [:]
        )
    }

    static func usageMessage(_ body: () throws -> Void) -> String? {
        do {
            try body()
            return nil
        } catch let error as SluiceError {
            return error.code == .usage ? error.message : "not a usage error: \(error)"
        } catch {
            return "not a SluiceError: \(error)"
        }
    }

    /// 20,000 nested parentheses crashed the CLI (SIGSEGV): the parser recursed once per level.
    @Test(arguments: [33, 20_000, 200_000])
    func deepParenthesesAreRefusedNotACrash(levels: Int) {
        let text = String(repeating: "(", count: levels) + "a = 1" + String(repeating: ")", count: levels)
        let message = Self.usageMessage { _ = try SearchFilter(parsing: text) }
        #expect(message?.contains("nested deeper than 32") == true, "\(message ?? "accepted")")
    }

    @Test func nestingUpToTheLimitIsRead() throws {
        let levels = FilterLimits.standard.maxDepth
        let text = String(repeating: "(", count: levels) + "a = 1" + String(repeating: ")", count: levels)
        #expect(try SearchFilter(parsing: text) == .compare("a", .equal, 1))
        // and/or nest up to the limit too: (a = 1 or (a = 2 and (a = 3 or …)))
        var nested = "z = 0"
        for level in 1..<levels { nested = "a = \(level) \(level % 2 == 0 ? "and" : "or") (\(nested))" }
        _ = try SearchFilter(parsing: nested)
    }

    @Test func deepJSONIsRefused() throws {
        var object: Any = ["a": 1]
        for _ in 0..<40 { object = ["$and": [object, ["b": 2]]] }
        let message = Self.usageMessage { _ = try SearchFilter(json: object) }
        #expect(message?.contains("nested deeper than 32") == true, "\(message ?? "accepted")")
        // Through the text reader (JSONSerialization itself stops at 512 levels).
        let text = String(repeating: #"{"$or": ["#, count: 600) + #"{"a": 1}"# + String(repeating: "]}", count: 600)
        #expect(Self.usageMessage { _ = try SearchFilter(parsing: text) } != nil)
    }

    /// A 60,000-term filter kept a core busy past the request's deadline: too many conditions are refused.
    @Test func tooManyConditionsAreRefused() throws {
        let limit = FilterLimits.standard.maxTerms
        let flat = (0...limit).map { "a = \($0)" }.joined(separator: " or ")
        #expect(
            Self.usageMessage { _ = try SearchFilter(parsing: flat) }?.contains("more than \(limit) conditions") == true
        )
        let list = "a in (" + (0...limit).map(String.init).joined(separator: ", ") + ")"
        #expect(Self.usageMessage { _ = try SearchFilter(parsing: list) }?.contains("conditions") == true)
        let json: [String: Any] = ["a": ["$in": Array(0...limit)]]
        #expect(Self.usageMessage { _ = try SearchFilter(json: json) }?.contains("conditions") == true)
        // At the limit: read.
        let atLimit = (1...limit).map { "a = \($0)" }.joined(separator: " or ")
        #expect(try SearchFilter(parsing: atLimit).termCount == limit)
    }

    /// PostgreSQL cannot hold U+0000: a store that says so refuses a filter holding one, in a value, a
    /// list value, a prefix or a field name; the other stores take it as the exact text it is.
    @Test(arguments: [
        "document_key ^= \"\u{0}\"", "document_key = \"a/doc0.md\u{0}junk\"", "format in (md, \"x\u{0}\")",
        #"{"title\u0000": "A"}"#, #"{"document_key": {"$in": ["a", "b\u0000"]}}"#,
    ])
    func nulIsRefusedWhereTheStoreCannotHoldIt(filter: String) throws {
        let parsed = try SearchFilter(parsing: filter)
        var limits = FilterLimits.standard
        limits.holdsNUL = false
        let message = Self.usageMessage { try parsed.check(limits, store: "pgvector") }
        #expect(message?.contains("pgvector cannot hold U+0000") == true, "\(message ?? "accepted")")
        try parsed.check(.standard)
    }

    @Test func nulIsExactWhereTheStoreHoldsIt() throws {
        let record = Self.record(key: "a/doc0.md")
        #expect(try !SearchFilter(parsing: "document_key ^= \"\u{0}\"").matches(record))
        #expect(try !SearchFilter(parsing: "document_key = \"a/doc0.md\u{0}junk\"").matches(record))
        #expect(try SearchFilter(parsing: "document_key in (\"x\u{0}\", \"a/doc0.md\")").matches(record))
    }

    /// NFC and NFD spellings are different keys in LMDB, PostgreSQL and Chroma: the local evaluation
    /// compares bytes too (Swift's `==` on `String` calls them equal).
    @Test func textComparesByBytes() throws {
        let nfc = "notes/caf\u{E9}.md"
        let nfd = "notes/cafe\u{301}.md"
        #expect(nfc == nfd)  // what Swift's == says, and the stores do not
        func record(_ key: String) -> VectorRecord {
            VectorRecord(
                id: VectorID(rawValue: key),
                documentKey: key,
                ordinal: 0,
                text: "",
                vector: [],
                metadata: ["title": .string(key), "tags": .strings([key])]
            )
        }
        let equalNFC = SearchFilter.compare(SearchFilter.documentKeyField, .equal, .string(nfc))
        #expect(equalNFC.matches(record(nfc)))
        #expect(!equalNFC.matches(record(nfd)))
        #expect(SearchFilter.compare(SearchFilter.documentKeyField, .notEqual, .string(nfc)).matches(record(nfd)))
        #expect(SearchFilter.oneOf("title", [.string(nfd)]).matches(record(nfd)))
        #expect(!SearchFilter.oneOf("title", [.string(nfd)]).matches(record(nfc)))
        #expect(!SearchFilter.compare("tags", .equal, .string(nfc)).matches(record(nfd)))
        // A prefix is a prefix of bytes: "notes/cafe" starts the NFD key, not the NFC one.
        #expect(SearchFilter.prefix(SearchFilter.documentKeyField, "notes/cafe").matches(record(nfd)))
        #expect(!SearchFilter.prefix(SearchFilter.documentKeyField, "notes/cafe").matches(record(nfc)))
        #expect(SearchFilter.prefix("tags", "notes/cafe").matches(record(nfd)))
    }

    @Test func ordinalIsABuiltInField() throws {
        let record = Self.record(key: "k", ordinal: 7)
        #expect(try SearchFilter(parsing: "ordinal = 7").matches(record))
        #expect(try SearchFilter(parsing: "ordinal >= 5 and ordinal < 8").matches(record))
        #expect(try !SearchFilter(parsing: "ordinal in (1, 2)").matches(record))
    }
}
