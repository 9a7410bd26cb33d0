import Foundation
import SluiceCore
import SluiceHTTP
import SluiceTesting
import Testing

@testable import SluiceSinks

/// One table of filters, run against every store with the same fixed records: each store must return
/// exactly the records ``SearchFilter/matches(_:)`` (the reference) accepts, or refuse the filter with a
/// usage error where the table says the store cannot express it. PostgreSQL and Chroma are real servers;
/// Qdrant and Pinecone are the validating stand-ins.
@Suite(.serialized)
struct FilterPushdownTests {
    static let identity = EmbedderIdentity(provider: "test", model: "filters", dimensions: 4)
    static let query: [Float] = [1, 0.5, 0.2, 0.1]

    static func time(_ text: String) -> MetadataValue { .time(MetadataValue.parseTime(text)!) }

    /// The records: built-in keys as the pipeline writes them (folders from the key), plus user keys.
    static let records: [VectorRecord] = {
        let rows: [(String, [String: MetadataValue])] = [
            (
                "reports/2026/q1.pdf",
                [
                    "page": 1, "format": "pdf", "headings": .strings(["Intro"]),
                    "mtime": time("2026-01-10T00:00:00Z"), "draft": false, "weight": 0.5,
                ]
            ),
            (
                "reports/2026/q1.pdf",
                [
                    "page": 3, "format": "pdf", "headings": .strings(["Intro", "Costs"]),
                    "mtime": time("2026-01-10T00:00:00Z"), "weight": 1.5,
                ]
            ),
            (
                "reports/2025/q4.pdf",
                [
                    "page": 10, "format": "pdf", "headings": .strings(["Summary"]),
                    "mtime": time("2025-12-01T08:30:00Z"), "draft": true,
                ]
            ),
            (
                "notes/a.md",
                [
                    "format": "md", "headings": .strings(["Costs"]), "mtime": time("2026-03-01T00:00:00Z"),
                    "draft": false, "title": "A",
                ]
            ),
            // A text page: numeric comparisons must skip it (and not fail on it).
            ("notes/b.txt", ["page": "iv", "format": "txt", "mtime": time("2026-02-01T00:00:00Z")]),
            ("top.txt", ["page": 2, "format": "txt", "title": "Top"]),
            ("reports/summary.docx", ["page": 3, "format": "docx", "weight": .double(2), "title": "Summary"]),
            ("notes/deep/c.md", ["format": "md", "page": 30, "mtime": time("2026-01-31T23:59:59Z")]),
            // Canonically equivalent twins (NFC, NFD): different keys in every store (compared by bytes).
            ("notes/caf\u{E9}.md", ["format": "md", "title": "caf\u{E9}"]),
            ("notes/cafe\u{301}.md", ["format": "md", "title": "cafe\u{301}"]),
        ]
        return rows.enumerated().map { index, row in
            var metadata = row.1
            var folders: [String] = []
            var prefix = ""
            for part in row.0.split(separator: "/").dropLast() {
                prefix += part + "/"
                folders.append(prefix)
            }
            if !folders.isEmpty { metadata["folders"] = .strings(folders) }
            let i = Float(index)
            return VectorRecord(
                id: VectorID(rawValue: String(format: "%032x", index + 1)),
                documentKey: row.0,
                ordinal: index,
                text: "record \(index) of \(row.0)",
                vector: [1, i * 0.3, cos(i), 0.5 + i * 0.01],
                metadata: metadata
            )
        }
    }()

    enum Store: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case local, jsonl, pgvector, chroma, qdrant, pinecone
        var testDescription: String { rawValue }
        static let http: Set<Store> = [.chroma, .qdrant, .pinecone]
    }

    /// A filter in the CLI's language and the stores that refuse it (the others must match the reference).
    struct Case: Sendable, CustomTestStringConvertible {
        var filter: String
        var refusedBy: Set<Store> = []
        /// Documented deviations from the reference: the ordinals a store leaves out (docs/STORES.md).
        var leavesOut: [Store: Set<Int>] = [:]
        var testDescription: String { filter }
    }

    static let cases: [Case] = [
        Case(filter: "format = pdf"),
        Case(filter: "format != pdf", refusedBy: [.chroma]),
        Case(filter: "page >= 3"),
        Case(filter: "page = 3"),
        Case(filter: "page < 3 or page > 10"),
        // Chroma's != on a number is < or > (its $ne matches missing fields): a text page is left out.
        Case(filter: "page != 3", leavesOut: [.chroma: [4]]),
        Case(filter: "headings = Costs"),
        Case(filter: "headings != Costs", refusedBy: [.chroma]),
        Case(filter: "headings in (Summary, Intro)"),
        Case(filter: "format in (md, txt)"),
        Case(filter: "page in (1, 30)"),
        Case(filter: "mtime >= 2026-01-01"),
        Case(filter: "mtime < 2026-02-01"),
        Case(filter: "mtime <= 2026-01-31T23:59:59Z and mtime > 2026-01-10T00:00:00Z"),
        Case(filter: "mtime = 2026-01-10T00:00:00Z"),
        Case(filter: "document_key = \"notes/a.md\""),
        Case(filter: "document_key != \"notes/a.md\""),
        Case(filter: "document_key in (\"top.txt\", \"notes/b.txt\")"),
        Case(filter: "document_key ^= \"reports/\""),
        Case(filter: "document_key ^= \"reports/2026/\""),
        Case(filter: "document_key ^= \"rep\"", refusedBy: Store.http),
        Case(filter: "page ^= \"1\"", refusedBy: Store.http),
        Case(filter: "title exists", refusedBy: [.chroma]),
        Case(filter: "draft = true"),
        Case(filter: "draft != true"),
        Case(filter: "weight > 1"),
        Case(filter: "weight = 2"),
        Case(filter: "(format = pdf and page > 1) or format = md"),
        Case(filter: "page >= 3 and page <= 10 and document_key ^= \"reports/\""),
        Case(filter: "format = pdf or title exists", refusedBy: [.chroma]),
        Case(filter: "missing = 1"),
        // Values and keys are bound, never spliced: quotes and SQL in them are plain text.
        Case(filter: #"title = "it's \"A\"'); DROP TABLE x; --" or title = A"#),
        Case(filter: #"{"it's": "x", "title": {"$ne": "Top"}}"#, refusedBy: [.chroma]),
        Case(filter: #"{"format": {"$in": ["md", "docx"]}, "page": {"$gte": 3}}"#),
        // Keys and values are compared by their bytes: an NFC key does not find its NFD twin.
        Case(filter: "document_key = \"notes/caf\u{E9}.md\""),
        Case(filter: "document_key = \"notes/cafe\u{301}.md\""),
        Case(filter: "document_key != \"notes/caf\u{E9}.md\""),
        Case(filter: "title = \"cafe\u{301}\""),
        Case(filter: "title in (\"caf\u{E9}\", Top)"),
        Case(filter: "document_key in (\"notes/cafe\u{301}.md\", \"top.txt\")"),
        Case(filter: "document_key ^= \"notes/cafe\"", refusedBy: Store.http),
        // A NUL is part of the text where the store holds it, and refused where it cannot (PostgreSQL).
        Case(filter: "document_key ^= \"\u{0}\"", refusedBy: Store.http.union([.pgvector])),
        Case(filter: "document_key = \"notes/a.md\u{0}junk\"", refusedBy: [.pgvector]),
        Case(filter: "document_key in (\"top.txt\", \"notes/a.md\u{0}\")", refusedBy: [.pgvector]),
        Case(filter: "format = \"md\u{0}\" or format = txt", refusedBy: [.pgvector]),
        Case(filter: #"{"title": {"$in": ["A", "Top\u0000"]}}"#, refusedBy: [.pgvector]),
        // The record's position in its document, a built-in field like document_key.
        Case(filter: "ordinal >= 5"),
        Case(filter: "ordinal in (0, 9)"),
        Case(filter: "ordinal = 3 or (document_key ^= \"notes/\" and ordinal < 5)"),
        Case(filter: "ordinal != 2 and format = pdf"),
    ]

    /// An open store, its server (if any) and its folder.
    struct Opened {
        var sink: any VectorSink
        var server: StandInServer?
        var folder: URL
        func close() {
            server?.stop()
            TemporaryDirectory.remove(folder)
        }
    }

    static func open(_ store: Store, table: String = "filters") async throws -> Opened {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "sluice-filters-\(store.rawValue)-\(UInt32.random(in: 0...UInt32.max))"
        )
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        switch store {
        case .local:
            return Opened(sink: try LocalSink(directory: folder.appendingPathComponent("index")), folder: folder)
        case .jsonl:
            return Opened(sink: try JSONLSink(path: folder.appendingPathComponent("out"), shards: 2), folder: folder)
        case .pgvector:
            let server = try await StandInServer.launch(
                script: "pgvector_server.py",
                arguments: [folder.appendingPathComponent("pg").path, "pw"]
            )
            var settings = PgvectorSink.Settings(
                url: "postgresql://postgres@127.0.0.1:\(server.port)/postgres",
                password: "pw",
                table: table
            )
            settings.connections = 1
            return Opened(sink: try PgvectorSink(settings: settings), server: server, folder: folder)
        case .chroma:
            let server = try await StandInServer.launch(script: "chroma_server.py", arguments: [folder.path])
            var settings = ChromaSink.Settings(url: server.baseURL, apiKey: nil)
            settings.collection = table
            return Opened(sink: ChromaSink(settings: settings), server: server, folder: folder)
        case .qdrant:
            let server = try await StandInServer.launch(script: "qdrant_standin.py")
            var settings = QdrantSink.Settings(url: server.baseURL, apiKey: nil)
            settings.collection = table
            return Opened(sink: QdrantSink(settings: settings), server: server, folder: folder)
        case .pinecone:
            let server = try await StandInServer.launch(script: "pinecone_standin.py", arguments: ["--api-key", "k"])
            var settings = PineconeSink.Settings(apiKey: "k", index: table)
            settings.controlURL = server.baseURL
            return Opened(sink: PineconeSink(settings: settings), server: server, folder: folder)
        }
    }

    static func ids(_ hits: [SearchHit]) -> Set<VectorID> { Set(hits.map(\.record.id)) }

    @Test(
        "every store returns what SearchFilter.matches accepts, or refuses with a usage error",
        arguments: Store.allCases
    )
    func sharedTable(_ store: Store) async throws {
        let opened = try await Self.open(store)
        defer { opened.close() }
        let sink = opened.sink
        try await sink.prepare(embedder: Self.identity)
        try await sink.upsert(Self.records)
        try await sink.finish()
        for testCase in Self.cases {
            let filter = try SearchFilter(parsing: testCase.filter)
            let request = SearchRequest(vector: Self.query, k: Self.records.count, filter: filter)
            if testCase.refusedBy.contains(store) {
                do {
                    _ = try await sink.search(request)
                    Issue.record("\(store): \(testCase.filter) should be refused")
                } catch let error as SluiceError {
                    #expect(error.code == .usage, "\(store): \(testCase.filter): \(error)")
                    #expect(error.message.contains("\(store.rawValue) cannot"), "\(error.message)")
                }
                continue
            }
            let leftOut = testCase.leavesOut[store] ?? []
            let expected = Set(Self.records.filter { filter.matches($0) && !leftOut.contains($0.ordinal) }.map(\.id))
            let found = Self.ids(try await sink.search(request))
            let keys = { (ids: Set<VectorID>) in
                Self.records.filter { ids.contains($0.id) }.map { "\($0.ordinal):\($0.documentKey)" }
            }
            #expect(
                found == expected,
                "\(store): \(testCase.filter): found \(keys(found)), expected \(keys(expected))"
            )
        }
        // A selective filter returns k results when k records match: the best k of the matching ones.
        let selective = try SearchFilter(parsing: "format = md or format = txt")
        let matching = Self.records.filter { selective.matches($0) }
        let best = matching.sorted {
            VectorMath.cosine(Self.query, $0.vector) > VectorMath.cosine(Self.query, $1.vector)
        }
        let hits = try await sink.search(SearchRequest(vector: Self.query, k: 2, filter: selective))
        #expect(hits.map(\.record.id) == best.prefix(2).map(\.id), "\(store)")
    }
}

extension FilterPushdownTests {
    @Test("pgvector: a selective filter over an HNSW index scan still returns k (iterative scan, then an exact scan)")
    func pgvectorSelectiveFilterUnderHNSW() async throws {
        let opened = try await Self.open(.pgvector, table: "selective")
        defer { opened.close() }
        let sink = try #require(opened.sink as? PgvectorSink)
        try await sink.prepare(embedder: Self.identity)
        var generator = SplitMix64(seed: 16)
        let records = (0..<3000).map { index in
            VectorRecord(
                id: VectorID(rawValue: String(format: "%032x", index + 1)),
                documentKey: "doc\(index % 50).txt",
                ordinal: index,
                text: "t\(index)",
                vector: (0..<4).map { _ in Float(generator.next() % 1000) / 1000 + 0.001 },
                metadata: ["format": index % 250 == 7 ? "rare" : "common", "page": .int(index)]
            )
        }
        try await sink.upsert(records)
        try await sink.finish()  // builds the HNSW index
        // Make the planner use the index, as it does on large tables (at 3,000 rows a scan is cheaper).
        try await sink.withConnection("force the index") { try $0.query("SET enable_seqscan = off") }
        let filter = try SearchFilter(parsing: "format = rare")
        let compiled = try PgvectorFilter(filter, firstParameter: 2)
        let sql = PgvectorSink.searchSQL(table: sink.quotedTable, op: "<=>", type: "vector", k: 10, filter: compiled)
        let parameters = [PgvectorCopy.vectorLiteral(Self.query)] + compiled.parameters
        let (plan, plainCount) = try await sink.withConnection("plan") { connection in
            let plan = try connection.query("EXPLAIN " + sql, parameters).compactMap { $0[0] }.joined(separator: "\n")
            // Without an iterative scan, the index's 40 candidates hold fewer than 10 rare rows.
            try connection.query("SET hnsw.iterative_scan = off")
            return (plan, try connection.query(sql, parameters).count)
        }
        #expect(plan.contains("selective_embedding_hnsw"), "\(plan)")
        #expect(plainCount < 10, "the test needs a filter the plain index scan cannot satisfy")

        let matching = records.filter { filter.matches($0) }
        #expect(matching.count == 12)
        let expected = matching.sorted {
            VectorMath.cosine(Self.query, $0.vector) > VectorMath.cosine(Self.query, $1.vector)
        }
        let hits = try await sink.search(SearchRequest(vector: Self.query, k: 10, filter: filter))
        #expect(hits.map(\.record.id) == expected.prefix(10).map(\.id))
        // More than match: every match, none else.
        let all = try await sink.search(SearchRequest(vector: Self.query, k: 50, filter: filter))
        #expect(Self.ids(all) == Set(matching.map(\.id)))

        // An iterative scan that stops early (hnsw.max_scan_tuples reached before k rows match): the
        // exact ranking of the matching rows still answers k.
        try await sink.withConnection("cap the iterative scan") { try $0.query("SET hnsw.max_scan_tuples = 60") }
        let capped = try await sink.search(SearchRequest(vector: Self.query, k: 10, filter: filter))
        #expect(capped.map(\.record.id) == expected.prefix(10).map(\.id))
    }
}

extension FilterPushdownTests {
    @Test("the Qdrant and Pinecone stand-ins answer a malformed filter with a 400, as the services do")
    func standInsRefuseMalformedFilters() async throws {
        let qdrant = try await Self.open(.qdrant)
        defer { qdrant.close() }
        try await qdrant.sink.prepare(embedder: Self.identity)
        let qdrantHTTP = StoreHTTP(
            baseURL: try #require(qdrant.server).baseURL,
            headers: [],
            maxRetries: 0,
            timeout: .seconds(10),
            label: "qdrant"
        )
        let qdrantFilters = [
            (#"{"must": [{"key": "metadata.page", "match": {"value": 1}}]}"#, 200),
            (#"{"must": [{"key": "metadata.page", "match": {"valeu": 1}}]}"#, 400),
            (#"{"must": [{"key": "metadata.page", "match": {"value": 1.5}}]}"#, 400),
            (#"{"must": [{"key": "metadata.page", "range": {"gt": "soon"}}]}"#, 400),
            (#"{"must": [{"key": "metadata.page", "prefix": "a"}]}"#, 400),
            (#"{"mustt": []}"#, 400),
        ]
        for (filter, status) in qdrantFilters {
            let body = #"{"vector": [1, 0, 0, 0], "limit": 3, "filter": \#(filter)}"#
            let response = try await qdrantHTTP.send(
                "POST",
                "/collections/filters/points/search",
                json: Array(body.utf8),
                accepting: [400]
            )
            #expect(response.status == status, "qdrant \(filter): \(response.bodyText)")
        }

        let pinecone = try await Self.open(.pinecone)
        defer { pinecone.close() }
        try await pinecone.sink.prepare(embedder: Self.identity)
        let pineconeHTTP = StoreHTTP(
            baseURL: try #require(pinecone.server).baseURL + "/index/filters",
            headers: [("Api-Key", "k"), ("X-Pinecone-Api-Version", PineconeSink.apiVersion)],
            maxRetries: 0,
            timeout: .seconds(10),
            label: "pinecone"
        )
        let pineconeFilters = [
            (#"{"page": {"$gte": 1, "$lt": 9}, "format": "pdf"}"#, 200),
            (#"{"page": {"$regex": "1"}}"#, 400),
            (#"{"format": {"$gt": "a"}}"#, 400),
            (#"{"format": {"$in": []}}"#, 400),
            (#"{"format": {"$exists": "yes"}}"#, 400),
            (#"{"$not": {"format": "pdf"}}"#, 400),
            (#"{"$and": {"format": "pdf"}}"#, 400),
        ]
        for (filter, status) in pineconeFilters {
            let body = #"{"namespace": "", "vector": [1, 0, 0, 0], "topK": 3, "filter": \#(filter)}"#
            let response = try await pineconeHTTP.send("POST", "/query", json: Array(body.utf8), accepting: [400])
            #expect(response.status == status, "pinecone \(filter): \(response.bodyText)")
        }
    }
}
