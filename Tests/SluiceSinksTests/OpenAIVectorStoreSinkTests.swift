import Foundation
import SluiceCore
import SluiceTesting
import Testing

@testable import SluiceSinks

/// The OpenAI vector store sink against its validating stand-in (openai_vector_store_standin.py, which
/// enforces the API's attribute, file and chunking limits and answers its errors): files uploaded,
/// attached, polled until processed, replaced and deleted; search with attribute filters; credentials,
/// rate limits, failed processing and unknown stores.
@Suite(.serialized)
struct OpenAIVectorStoreSinkTests {
    static let identity = EmbedderIdentity(provider: "store", model: "openai-vector-store", dimensions: 0)

    static func record(_ key: String, _ text: String, metadata: [String: MetadataValue] = [:]) -> VectorRecord {
        VectorRecord(
            id: VectorID(documentKey: key, ordinal: 0, chunkHash: ContentHash(utf8: text)),
            documentKey: key,
            ordinal: 0,
            text: text,
            vector: [],
            metadata: metadata
        )
    }

    static func sink(
        _ server: StandInServer,
        key: String = "sk-test",
        store: String = "unit",
        retries: Int = 6
    ) -> OpenAIVectorStoreSink {
        var section = PipelineConfiguration.Sink()
        section.kind = .openAIVectorStore
        section.url = server.baseURL + "/v1"
        section.collection = store
        section.maxRetries = retries
        return OpenAIVectorStoreSink(settings: .init(section: section, apiKey: key))
    }

    static func launch(_ extra: [String] = []) async throws -> StandInServer {
        try await StandInServer.launch(
            script: "openai_vector_store_standin.py",
            arguments: ["--api-key", "sk-test", "--processing-polls", "2"] + extra
        )
    }

    @Test("files uploaded, attached and waited for; a re-upsert uploads nothing; delete detaches and deletes the file")
    func lifecycle() async throws {
        let server = try await Self.launch()
        defer { server.stop() }
        let sink = Self.sink(server)
        #expect(sink.embedsText)
        #expect(try await sink.info().exists == false)
        try await sink.prepare(embedder: Self.identity)
        let modified = Date(timeIntervalSince1970: 1_700_000_000)
        let a = Self.record(
            "docs/a.md",
            "Rivers carry water to the sea.",
            metadata: ["lang": "en", "year": .int(2024)]
        )
        let b = Self.record(
            "docs/b.md",
            "Mountains are made of rock and ice.",
            metadata: ["lang": "fr", "modified": .time(modified)]
        )
        let c = Self.record(
            "notes/c.txt",
            "The sea is salty; rivers are not.",
            metadata: ["lang": "en", "year": .int(2020)]
        )
        try await sink.upsert([a, b, c])
        #expect(try await sink.count() == 3)
        var stats = try await HTTPStoreSinkTests.stats(server)
        #expect(stats["uploads"] == 3 && stats["attaches"] == 3, "\(stats)")
        // Three records: one file batch, read until processed (in_progress for two reads in this stand-in).
        #expect(stats["file_batches"] == 1 && stats["batched_files"] == 3 && stats["batch_polls"] == 2, "\(stats)")
        #expect(stats["invalid"] == 0, "\(stats)")

        // The same records again, from a sink that has to find the store by name: nothing uploaded.
        let again = Self.sink(server)
        try await again.prepare(embedder: Self.identity)
        try await again.upsert([a, b, c])
        stats = try await HTTPStoreSinkTests.stats(server)
        #expect(stats["uploads"] == 3, "\(stats)")

        // Search ranks by the text, filters on attributes; the record comes back with its metadata.
        let hits = try await again.search(SearchRequest(text: "salty sea rivers", k: 5))
        #expect(hits.first?.record.id == c.id)
        #expect(hits.first?.record.documentKey == "notes/c.txt")
        #expect(hits.first?.record.metadata["year"]?.number == 2020)
        let filtered = try await again.search(
            SearchRequest(
                text: "rivers sea",
                k: 5,
                filter: .and([.compare("lang", .equal, "en"), .compare("year", .greater, .int(2021))])
            )
        )
        #expect(filtered.map(\.record.id) == [a.id])
        let byTime = try await again.search(
            SearchRequest(text: "rock", k: 5, filter: .compare("modified", .greaterOrEqual, .time(modified)))
        )
        #expect(byTime.map(\.record.id) == [b.id])
        #expect(byTime.first?.record.metadata["modified"] == .time(modified))
        let oneOf = try await again.search(
            SearchRequest(text: "rivers rock", k: 5, filter: .oneOf("document_key", ["docs/a.md", "docs/b.md"]))
        )
        #expect(Set(oneOf.map(\.record.id)) == [a.id, b.id])

        // A changed document: the new file attached, the old one detached and deleted.
        let a2 = Self.record("docs/a.md", "Rivers carry water and silt to the sea.", metadata: ["lang": "en"])
        try await again.upsert([a2])
        try await again.delete([a.id])
        stats = try await HTTPStoreSinkTests.stats(server)
        #expect(stats["uploads"] == 4 && stats["detaches"] == 1 && stats["file_deletes"] == 1, "\(stats)")
        #expect(try await again.listIDs() == [a2.id, b.id, c.id])
        #expect(try await again.existing([a.id, a2.id]) == [a2.id])

        let collected = ExportCollector()
        try await again.exportAll { collected.append($0) }
        #expect(collected.records.map(\.text).sorted() == [a2.text, b.text, c.text].sorted())

        try await again.drop()
        #expect(try await again.info().exists == false)
        stats = try await HTTPStoreSinkTests.stats(server)
        #expect(stats["file_deletes"] == 4, "\(stats)")
    }

    @Test("429s are retried (Retry-After), a failed processing fails with the reason and leaves no file")
    func rateLimitsAndFailures() async throws {
        let server = try await Self.launch(["--rate-limit-every", "3", "--fail-marker", "CORRUPT"])
        defer { server.stop() }
        let sink = Self.sink(server)
        try await sink.prepare(embedder: Self.identity)
        try await sink.upsert([Self.record("a.txt", "alpha beta"), Self.record("b.txt", "gamma delta")])
        #expect(try await sink.count() == 2)
        let error = await #expect(throws: SluiceError.self) {
            try await sink.upsert([Self.record("bad.txt", "CORRUPT bytes")])
        }
        #expect(error?.code == .sinkFailed)
        #expect(error?.message.contains("unsupported_file") == true, "\(String(describing: error))")
        let stats = try await HTTPStoreSinkTests.stats(server)
        #expect((stats["rate_limited"] ?? 0) > 0, "\(stats)")
        #expect(stats["uploads"] == 3 && stats["file_deletes"] == 1, "\(stats)")
        #expect(try await sink.count() == 2)
    }

    @Test("writers at once against a stand-in that refuses every third request: every refusal a 429, each retried")
    func concurrentWritersUnderRateLimits() async throws {
        // The stand-in decides a refusal by the request's own number; read twice from the shared counter,
        // a refused body was left unread (or read twice) and the next request on the connection was garbage.
        // Which request is refused does not depend on its writer, so one may be refused several times running:
        // 16 retries make giving up a chance of 3^-17 a request.
        let server = try await Self.launch(["--rate-limit-every", "3"])
        defer { server.stop() }
        try await Self.sink(server).prepare(embedder: Self.identity)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<8 {
                group.addTask {
                    let sink = Self.sink(server, retries: 16)
                    for index in 0..<15 {
                        try await sink.upsert([Self.record("w\(writer)/\(index).txt", "writer \(writer) text \(index)")]
                        )
                    }
                }
            }
            try await group.waitForAll()
        }
        let stats = try await HTTPStoreSinkTests.stats(server)
        #expect(stats["invalid"] == 0 && (stats["rate_limited"] ?? 0) > 0, "\(stats)")
        #expect(stats["rejected"] == stats["rate_limited"], "\(stats)")
        #expect(stats["uploads"] == 120 && stats["attaches"] == 120, "\(stats)")
        #expect(try await Self.sink(server).count() == 120)
    }

    @Test("many records: one file batch, each file its own attributes, fewer requests, the end state of one at a time")
    func fileBatches() async throws {
        let batched = try await Self.launch()
        defer { batched.stop() }
        let single = try await Self.launch()
        defer { single.stop() }
        let records = (0..<12).map { index in
            Self.record(
                "docs/\(index).md",
                "Document \(index) about topic \(index % 3): rivers, rock and ice.",
                metadata: ["n": .int(index), "lang": index % 2 == 0 ? "en" : "fr", "draft": .bool(index > 6)]
            )
        }
        let many = Self.sink(batched)
        try await many.prepare(embedder: Self.identity)
        try await many.upsert(records)
        let one = Self.sink(single)
        try await one.prepare(embedder: Self.identity)
        for record in records { try await one.upsert([record]) }

        let batchedStats = try await HTTPStoreSinkTests.stats(batched)
        let singleStats = try await HTTPStoreSinkTests.stats(single)
        #expect(batchedStats["file_batches"] == 1 && batchedStats["batched_files"] == 12, "\(batchedStats)")
        #expect(singleStats["file_batches"] == 0 && singleStats["attaches"] == 12, "\(singleStats)")
        #expect(batchedStats["invalid"] == 0 && singleStats["invalid"] == 0)
        let (batchedRequests, singleRequests) = (batchedStats["requests"] ?? 0, singleStats["requests"] ?? 0)
        #expect(batchedRequests > 0 && 2 * batchedRequests < singleRequests, "\(batchedRequests) vs \(singleRequests)")

        // The same records, texts, attributes and processing status either way.
        func exported(_ sink: OpenAIVectorStoreSink) async throws -> [String] {
            let collected = ExportCollector()
            try await sink.exportAll { collected.append($0) }
            return collected.records.map { record in
                let metadata = record.metadata.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
                return "\(record.id) \(record.documentKey) \(metadata) \(record.text)"
            }.sorted()
        }
        let fromBatch = try await exported(many)
        #expect(fromBatch.count == 12)
        #expect(fromBatch == (try await exported(one)))
        #expect(try await many.info().details["files"] == "12 completed, 0 in progress, 0 failed")
        #expect(try await one.info().details["files"] == "12 completed, 0 in progress, 0 failed")
    }

    @Test(
        "a file batch: a failed file fails the write with its reason, the others kept; past the deadline it is cancelled"
    )
    func fileBatchFailures() async throws {
        let server = try await Self.launch(["--fail-marker", "CORRUPT"])
        defer { server.stop() }
        let sink = Self.sink(server)
        try await sink.prepare(embedder: Self.identity)
        let good = [Self.record("a.txt", "alpha beta"), Self.record("b.txt", "gamma delta")]
        let error = await #expect(throws: SluiceError.self) {
            try await sink.upsert(good + [Self.record("bad.txt", "CORRUPT bytes")])
        }
        #expect(error?.code == .sinkFailed)
        #expect(
            error?.message.contains("bad.txt") == true && error?.message.contains("unsupported_file") == true,
            "\(String(describing: error))"
        )
        var stats = try await HTTPStoreSinkTests.stats(server)
        #expect(stats["uploads"] == 3 && stats["detaches"] == 1 && stats["file_deletes"] == 1, "\(stats)")
        #expect(try await sink.listIDs() == Set(good.map(\.id)))
        // Written again, the two processed ones are not uploaded again.
        try await sink.upsert(good)
        stats = try await HTTPStoreSinkTests.stats(server)
        #expect(stats["uploads"] == 3, "\(stats)")

        // A batch still in progress at the deadline is cancelled; the run stops as for an unavailable store.
        let slow = try await Self.launch(["--processing-polls", "1000000"])
        defer { slow.stop() }
        var section = PipelineConfiguration.Sink()
        section.kind = .openAIVectorStore
        section.url = slow.baseURL + "/v1"
        section.collection = "slow"
        section.processingTimeoutSeconds = 0.5
        let waiting = OpenAIVectorStoreSink(settings: .init(section: section, apiKey: "sk-test"))
        try await waiting.prepare(embedder: Self.identity)
        let late = await #expect(throws: SluiceError.self) { try await waiting.upsert(good) }
        #expect(late?.code == .sinkUnavailable, "\(String(describing: late))")
        stats = try await HTTPStoreSinkTests.stats(slow)
        #expect(stats["file_batches"] == 1 && stats["batch_cancels"] == 1, "\(stats)")
    }

    @Test(
        "a wrong key is refused (exit 5), an unknown vector_store_id is a configuration error, a file over the limit is refused"
    )
    func errors() async throws {
        let server = try await Self.launch(["--max-file-bytes", "64"])
        defer { server.stop() }
        let wrong = Self.sink(server, key: "sk-wrong")
        let refused = await #expect(throws: SluiceError.self) { try await wrong.prepare(embedder: Self.identity) }
        #expect(refused?.code == .providerRefused)
        #expect(refused?.message.contains("sk-wrong") == false)

        var section = PipelineConfiguration.Sink()
        section.url = server.baseURL + "/v1"
        section.vectorStoreID = "vs_missing"
        let unknown = OpenAIVectorStoreSink(settings: .init(section: section, apiKey: "sk-test"))
        let missing = await #expect(throws: SluiceError.self) { try await unknown.prepare(embedder: Self.identity) }
        #expect(missing?.code == .configuration)

        let sink = Self.sink(server)
        try await sink.prepare(embedder: Self.identity)
        let large = await #expect(throws: SluiceError.self) {
            try await sink.upsert([Self.record("big.txt", String(repeating: "word ", count: 40))])
        }
        #expect(large?.code == .sinkFailed)
        #expect(large?.message.contains("too large") == true, "\(String(describing: large))")
    }

    @Test("attributes stay within 16 keys, 64-character keys and 512-character strings; lists and the rest are dropped")
    func attributes() {
        var metadata: [String: MetadataValue] = [:]
        for index in 0..<20 { metadata[String(format: "k%02d", index)] = .int(index) }
        metadata["headings"] = .strings(["A", "B"])
        metadata["long"] = .string(String(repeating: "x", count: 513))
        metadata[String(repeating: "a", count: 65)] = .bool(true)
        metadata["at"] = .time(Date(timeIntervalSince1970: 1_000))
        let record = Self.record("doc.txt", "text", metadata: metadata)
        let encoded = OpenAIVectorStoreAttributes.encode(record)
        #expect(encoded.attributes.count == 16)
        #expect(encoded.attributes["sluice_id"] == .string(record.id.rawValue))
        #expect(encoded.attributes["document_key"] == "doc.txt")
        #expect(encoded.attributes["at"] == .int(1_000))
        #expect(encoded.attributes["sluice_times"] == "at")
        #expect(encoded.dropped.contains("headings") && encoded.dropped.contains("long"))
        #expect(encoded.dropped.contains(String(repeating: "a", count: 65)))
        // sluice_id, document_key, ordinal, at and its marker, then k00…k10.
        #expect(encoded.attributes["k10"] == .int(10) && encoded.attributes["k11"] == nil)
        let back = OpenAIVectorStoreAttributes.record(attributes: encoded.attributes, text: "text", fileID: "file-1")
        #expect(back.id == record.id && back.documentKey == "doc.txt")
        #expect(back.metadata["at"] == .time(Date(timeIntervalSince1970: 1_000)))
    }

    @Test("filters: comparisons, in, and/or translated; prefix, exists, != on an optional field and lists refused")
    func filters() throws {
        let compiled = try OpenAIVectorStoreFilter.compile(
            .or([.compare("year", .lessOrEqual, .int(2020)), .oneOf("lang", ["en", "fr"])])
        )
        let json = String(decoding: try StoreHTTP.encode(compiled), as: UTF8.self)
        #expect(
            json.contains("\"type\":\"or\"") && json.contains("\"type\":\"lte\"") && json.contains("\"type\":\"in\"")
        )
        _ = try OpenAIVectorStoreFilter.compile(.compare("document_key", .notEqual, "a.txt"))
        for refused: SearchFilter in [
            .prefix("document_key", "docs/"), .exists("lang"), .compare("lang", .notEqual, "en"),
            .compare("sluice_id", .equal, "x"), .compare("tags", .equal, .strings(["a"])),
        ] {
            #expect(throws: SluiceError.self, "\(refused)") { try OpenAIVectorStoreFilter.compile(refused) }
        }
        #expect(throws: SluiceError.self) {
            try SearchRequest(mode: .keyword, text: "x", k: 1).requireVectorMode("openai-vector-store")
        }
    }
}
