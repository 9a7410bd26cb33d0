import Foundation
import SluiceCore
import Testing

@testable import SluicePipeline

/// The judged query file: Benchmarks/retrieval/queries.jsonl's format, refused line by line when wrong.
@Suite struct JudgedQueryTests {
    static let good =
        #"{"id": "q1", "query": "how", "kind": "natural", "relevant": [{"key": "a.txt", "contains": "x y"}, {"key": "b.pdf", "page": 2}], "note": "n"}"#

    @Test func readsQueriesSkippingBlankLinesAndCarriageReturns() throws {
        let text = Self.good + "\r\n\n   \n" + #"{"id": "q2", "query": "what", "relevant": [{"key": "c.md"}]}"# + "\n"
        let queries = try JudgedQuery.parse(text, origin: "f.jsonl")
        #expect(queries.count == 2)
        #expect(queries[0].relevant == [.init(key: "a.txt", contains: "x y"), .init(key: "b.pdf", page: 2)])
        #expect(queries[0].kind == "natural" && queries[0].note == "n")
        #expect(queries[1].kind == nil && queries[1].relevant == [.init(key: "c.md")])
    }

    @Test(arguments: [
        ("not json", "not a JSON object"),
        ("[1, 2]", "not a JSON object"),
        (#"{"query": "q", "relevant": [{"key": "a"}]}"#, "`id` is missing"),
        (#"{"id": "q9", "relevant": [{"key": "a"}]}"#, "`query` is missing"),
        (#"{"id": "q9", "query": " ", "relevant": [{"key": "a"}]}"#, "`query` is empty"),
        (#"{"id": 9, "query": "q", "relevant": [{"key": "a"}]}"#, "`id` must be a string"),
        (#"{"id": "q9", "query": "q"}"#, "`relevant` must be a list"),
        (#"{"id": "q9", "query": "q", "relevant": []}"#, "`relevant` is empty"),
        (#"{"id": "q9", "query": "q", "relevant": ["a"]}"#, "relevant[0] is not an object"),
        (#"{"id": "q9", "query": "q", "relevant": [{"page": 1}]}"#, "`key` is missing"),
        (#"{"id": "q9", "query": "q", "relevant": [{"key": "a", "page": 0}]}"#, "relevant[0].page must be"),
        (#"{"id": "q9", "query": "q", "relevant": [{"key": "a", "page": "2"}]}"#, "relevant[0].page must be"),
        (#"{"id": "q9", "query": "q", "relevant": [{"key": "a", "page": 1.5}]}"#, "relevant[0].page must be"),
        (#"{"id": "q9", "query": "q", "relevant": [{"key": "a", "contains": ""}]}"#, "`contains` is empty"),
        (#"{"id": "q9", "query": "q", "relevant": [{"key": "a"}, {"key": "a"}]}"#, "relevant[1] is listed twice"),
        (#"{"id": "q1", "query": "q", "relevant": [{"key": "a"}]}"#, "the id q1 is used on line 1 already"),
        // A misspelled key is refused, not left out (a condition left out scores higher than the truth).
        (
            #"{"id": "q9", "query": "q", "relevant": [{"key": "a", "contians": "x"}]}"#,
            "unknown key `relevant[0].contians`"
        ),
        (#"{"id": "q9", "query": "q", "relevent": [], "relevant": [{"key": "a"}]}"#, "unknown key `relevent`"),
    ])
    func refusesABadLineNamingIt(line: String, problem: String) throws {
        let text = Self.good + "\n\n" + line + "\n"
        #expect {
            try JudgedQuery.parse(text, origin: "f.jsonl")
        } throws: { error in
            let error = error as? SluiceError
            return error?.code == .usage && error?.message == "f.jsonl:3: \(problem)"
                || (error?.message.hasPrefix("f.jsonl:3: \(problem)") ?? false)
        }
    }

    @Test func anEmptyFileIsRefused() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("empty-\(UUID().uuidString).jsonl")
        try "\n\n".write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        #expect(throws: SluiceError.self) { try JudgedQuery.load(file) }
        #expect(throws: SluiceError.self) { try JudgedQuery.load(file.appendingPathExtension("missing")) }
    }

    /// What `--generate` writes reads back as the same queries.
    @Test func aWrittenLineReadsBack() throws {
        let query = JudgedQuery(
            id: "g001",
            query: "what does \"x\" mean?",
            kind: "generated",
            relevant: [.init(key: "dir/a b.pdf", page: 3, contains: "a phrase")],
            note: "from chunk #4"
        )
        let line = try query.jsonLine()
        #expect(!line.contains("\n"))
        #expect(try JudgedQuery.parse(line, origin: "x") == [query])
    }

    /// The repository's own sets read without a problem (119 tuning, 93 held-out, 87 in the third, 91 in the
    /// fourth and 94 in the fifth, the last three written blind, as their README says).
    @Test func theRepositorysSetReads() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        for (file, count) in [
            ("queries.jsonl", 119), ("heldout.jsonl", 93), ("heldout2.jsonl", 87), ("heldout3.jsonl", 91),
            ("heldout4.jsonl", 94),
        ] {
            let queries = try JudgedQuery.load(root.appendingPathComponent("Benchmarks/retrieval/\(file)"))
            #expect(queries.count == count, "\(file)")
            #expect(queries.allSatisfy { $0.kind != nil && $0.relevant.allSatisfy { $0.contains != nil } })
        }
    }
}
