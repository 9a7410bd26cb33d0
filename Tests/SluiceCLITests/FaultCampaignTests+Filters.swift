import Foundation
import SluiceCore
import SluiceTesting
import Testing

/// The campaign's filters and queries (issue 37): one differential filter table run through `sluice
/// search` against every store (each must find what the local store finds, or refuse with exit 1 where it
/// cannot express or hold the filter: never answer for another filter, as a NUL cut by libpq did), and
/// oversized filters and queries through the CLI and `sluice serve` (exit 1 / 400, never a crash or a 5xx).
extension FaultCampaignTests {
    /// A filter in the CLI's language, and the stores that must refuse it.
    struct FilterCampaignCase: Sendable {
        var filter: String
        var refusedBy: Set<StoreUnderTest.Kind> = []
    }

    static let nfcKey = "caf\u{E9}.txt"
    static let nfdKey = "cafe\u{301}.txt"
    static let httpStores: Set<StoreUnderTest.Kind> = [.chroma, .qdrant, .pinecone]

    static let filterCampaignCases: [FilterCampaignCase] = [
        FilterCampaignCase(filter: "format = md"),
        FilterCampaignCase(filter: "document_key = \"\(nfcKey)\""),
        FilterCampaignCase(filter: "document_key = \"\(nfdKey)\""),
        FilterCampaignCase(filter: "document_key in (\"\(nfdKey)\", \"top.txt\")"),
        FilterCampaignCase(filter: "document_key ^= \"notes/\""),
        FilterCampaignCase(filter: "document_key ^= \"cafe\"", refusedBy: httpStores),
        FilterCampaignCase(filter: "ordinal >= 1 and format = txt"),
        FilterCampaignCase(filter: "ordinal = 0 and document_key ^= \"notes/deep/\""),
        // Chroma's $ne also matches records without the field: `!=` on text is refused there (docs/STORES.md).
        FilterCampaignCase(filter: "format != md", refusedBy: [.chroma]),
        // U+0000 (in the JSON form: a command line cannot hold a NUL): exact text where the store holds it,
        // refused where it cannot (PostgreSQL).
        FilterCampaignCase(
            filter: #"{"document_key": {"$prefix": "\u0000"}}"#,
            refusedBy: httpStores.union([.pgvector])
        ),
        FilterCampaignCase(filter: #"{"document_key": "notes/a.md\u0000junk"}"#, refusedBy: [.pgvector]),
        FilterCampaignCase(filter: #"{"format": {"$in": ["md", "txt\u0000"]}}"#, refusedBy: [.pgvector]),
        FilterCampaignCase(
            filter: #"{"document_key": {"$in": ["top.txt", "notes/a.md\u0000"]}}"#,
            refusedBy: [.pgvector]
        ),
    ]

    /// Documents whose keys are NFC/NFD twins, in folders, of two formats, some of several chunks.
    static func writeFilterCorpus(_ corpus: URL) throws {
        let long = (0..<30).map { "Line \($0) of a longer note about gates and water." }.joined(separator: " ")
        // A list, not a dictionary: Swift's String equality would make the twins one key.
        let documents: [(String, String)] = [
            (nfcKey, "The first cafe, one scalar."), (nfdKey, "The second cafe, decomposed. " + long),
            ("top.txt", "A top level text."), ("notes/a.md", "# A\n\nA note about rivers. " + long),
            ("notes/b.txt", "Another note."), ("notes/deep/c.md", "# C\n\nDeep note. " + long),
        ]
        for (key, text) in documents { try Corpus.write(text, to: corpus.appendingPathComponent(key)) }
    }

    /// The (document, ordinal) pairs a filtered search finds, or nil with the exit code when it fails.
    static func filtered(
        _ ws: Workspace,
        _ target: Workspace.Target,
        _ filter: String
    ) async throws -> (found: Set<String>?, result: CommandResult) {
        let result = try await ws.sluice(
            ["search", "water and gates", "--json", "--no-collapse", "--mode", "vector", "-k", "200"]
                + ["--filter", filter, ws.pipeline.path] + target.arguments
        )
        guard result.exitCode == 0 else { return (nil, result) }
        var found = Set<String>()
        for line in result.stdout.split(separator: "\n") {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] ?? [:]
            let key = object["document_key"] as? String ?? "?"
            // By bytes: a Set<String> would merge the NFC and NFD twins.
            found.insert(key.utf8.map { String(format: "%02x", $0) }.joined() + "#\(object["ordinal"] ?? "?")")
        }
        return (found, result)
    }

    @Test("the differential filter table through sluice search: pgvector against the local store")
    func filterTable() async throws {
        try await Self.filterTable(.pgvector)
    }

    @Test(
        "the sweep: the differential filter table on every store",
        .enabled(if: FaultCampaign.sweep),
        arguments: [StoreUnderTest.Kind.jsonl, .chroma, .qdrant, .pinecone]
    )
    func filterTableSweep(_ kind: StoreUnderTest.Kind) async throws {
        try await Self.filterTable(kind)
    }

    static func filterTable(_ kind: StoreUnderTest.Kind) async throws {
        let ws = try Workspace("faults-filters-\(kind.rawValue)")
        defer { ws.cleanUp() }
        try writeFilterCorpus(ws.corpus)
        let store = try await StoreUnderTest.start(kind, in: ws)
        defer { store.stop() }
        let local = ws.target("local")
        let main = store.target(ws, "main")
        try await ws.run(local, expecting: 0)
        try await ws.run(main, expecting: 0)
        for testCase in filterCampaignCases {
            let shown = testCase.filter.replacingOccurrences(of: "\u{0}", with: "\\u0000")
            try await FaultCampaign.scenario(.input, "filter on \(kind.rawValue): \(shown)") { scenario in
                let (reference, referenceResult) = try await filtered(ws, local, testCase.filter)
                scenario.expect(reference != nil, "the local store failed: \(referenceResult)")
                let (found, result) = try await filtered(ws, main, testCase.filter)
                if testCase.refusedBy.contains(kind) {
                    scenario.expect(result.exitCode == 1, "should be refused with exit 1: \(result)")
                    scenario.expect(result.stderr.contains("\(kind.rawValue) cannot"), "\(result.stderr)")
                } else {
                    scenario.expect(found == reference, "found \(found ?? []), the local store \(reference ?? [])")
                }
                scenario.expect(!result.stderr.contains("Fatal error"), "a crash: \(result)")
            }
        }
    }

    @Test("oversized filters and queries: exit 1 from the CLI and 400 from serve, never a crash or a 5xx")
    func oversizedFiltersAndQueries() async throws {
        let ws = try Workspace("faults-oversized")
        defer { ws.cleanUp() }
        try Self.writeFilterCorpus(ws.corpus)
        let store = try await StoreUnderTest.start(.pgvector, in: ws)
        defer { store.stop() }
        let local = ws.target("local")
        let main = store.target(ws, "main")
        try await ws.run(local, expecting: 0)
        try await ws.run(main, expecting: 0)

        let deep = String(repeating: "(", count: 20_000) + "format = md" + String(repeating: ")", count: 20_000)
        let wide = "page in (" + (0..<20_000).map(String.init).joined(separator: ",") + ")"
        let words = (0..<2_000).map { "w\($0)" }.joined(separator: " ")  // 11 KB: under the byte limit
        let cli: [(name: String, query: String, arguments: [String], message: String)] = [
            ("20,000 nested parentheses", "x", ["--filter", deep], "nested deeper"),
            ("a filter of 20,000 terms", "x", ["--filter", wide], "conditions"),
            ("a keyword query of 2,000 words", words, ["--mode", "keyword"], "distinct words"),
            ("a hybrid query of 2,000 words", words, ["--mode", "hybrid"], "distinct words"),
            ("a query of 60 KB", String(repeating: "water ", count: 10_000), [], "bytes long"),
        ]
        for (storeName, target) in [("local", local), ("pgvector", main)] {
            for item in cli {
                try await FaultCampaign.scenario(.input, "search on \(storeName): \(item.name)") { scenario in
                    let result = try await ws.sluice(
                        ["search", item.query] + item.arguments + [ws.pipeline.path] + target.arguments
                    )
                    scenario.expect(result.exitCode == 1, "exit \(String(describing: result.exitCode)): \(result)")
                    scenario.expect(result.stderr.contains(item.message), "\(result.stderr.prefix(500))")
                }
            }
        }

        // At the limits: searched (pgvector ranks a 256-word OR, which 20,000 words broke).
        let atLimit = (0..<255).map { "w\($0)" }.joined(separator: " ") + " water"
        let wideAtLimit = "page in (" + (0..<1_024).map(String.init).joined(separator: ",") + ")"
        for (storeName, target) in [("local", local), ("pgvector", main)] {
            for (name, arguments) in [
                ("a keyword query of 256 distinct words", [atLimit, "--mode", "keyword"]),
                ("a hybrid query of 256 distinct words", [atLimit, "--mode", "hybrid"]),
                ("a filter of 1,024 terms", ["water", "--filter", wideAtLimit]),
            ] {
                try await FaultCampaign.scenario(.input, "search on \(storeName): \(name)") { scenario in
                    let result = try await ws.sluice(["search"] + arguments + [ws.pipeline.path] + target.arguments)
                    scenario.expect(result.exitCode == 0, "exit \(String(describing: result.exitCode)): \(result)")
                }
            }
        }

        let server = try await ServeProcess.start(ws, main)
        func json(_ object: Any) throws -> Data { try JSONSerialization.data(withJSONObject: object) }
        var nested: Any = ["format": "md"]
        for _ in 0..<100 { nested = ["$and": [nested, ["format": "md"]]] }  // JSONSerialization stops at 512
        let bodies: [(name: String, body: Data, message: String)] = [
            (
                "a filter of 60,000 terms",
                try json(["query": "x", "filter": ["page": ["$in": Array(0..<60_000)]]]), "conditions"
            ),
            ("100 nested $and", try json(["query": "x", "filter": nested]), "nested deeper"),
            (
                "40,000 conditions of one field each",
                try json(["query": "x", "filter": ["$or": (0..<40_000).map { ["page": $0] }]]), "conditions"
            ),
            (
                "a keyword query of 2,000 words",
                try json(["query": (0..<2_000).map { "w\($0)" }.joined(separator: " "), "mode": "keyword"]),
                "distinct words"
            ),
            ("a query of 64 KB", try json(["query": String(repeating: "water ", count: 11_000)]), "bytes long"),
            (
                "a NUL in a prefix", try json(["query": "x", "filter": ["document_key": ["$prefix": "\u{0}"]]]),
                "U+0000"
            ),
            (
                "a NUL in an $in list",
                try json(["query": "x", "filter": ["document_key": ["$in": ["top.txt", "a\u{0}"]]]]), "U+0000"
            ),
        ]
        for item in bodies {
            try await FaultCampaign.scenario(.input, "serve on pgvector: \(item.name)") { scenario in
                let (status, _, body) = try await server.exchange(
                    "POST",
                    "/v1/search",
                    body: item.body,
                    headers: ["Content-Type": "application/json"]
                )
                let text = String(decoding: body, as: UTF8.self)
                scenario.expect(status == 400, "status \(status): \(text.prefix(300))")
                scenario.expect(ServeProcess.errorCode(body) == "usage", "\(text.prefix(300))")
                scenario.expect(text.contains(item.message), "\(text.prefix(300))")
            }
        }
        // The server still answers ordinary searches.
        let (status, _, _) = try await server.exchange(
            "POST",
            "/v1/search",
            body: try json(["query": "water", "filter": ["format": "md"]]),
            headers: ["Content-Type": "application/json"]
        )
        #expect(status == 200)
        _ = try await server.stop()
    }
}
