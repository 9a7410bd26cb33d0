import Foundation
import SluiceCore
import SluiceTesting
import Testing

@testable import SluiceSinks

/// The pure parts shared by the sinks: backoff, batch splitting, PostgreSQL COPY text, Pinecone
/// metadata limits, JSONL journal replay.
struct SinkPartsTests {
    @Test(
        "stores retry under the one policy: backoff from 100 ms to 10 s, Retry-After replaces it, max_retries counts retries"
    )
    func storePolicy() {
        var retry = RetryStateMachine(policy: .store(maxRetries: 3))
        #expect(retry.failed(.transient(reason: "503"), unit: 1) == .retry(after: .milliseconds(100)))
        #expect(retry.failed(.transient(reason: "reset"), unit: 1) == .retry(after: .milliseconds(200)))
        // A server's wait shorter than the backoff is honoured as it is: not a floor.
        #expect(
            retry.failed(.rateLimited(reason: "429", serverWait: .milliseconds(5)), unit: 1)
                == .retry(after: .milliseconds(5))
        )
        #expect(retry.failed(.transient(reason: "timeout"), unit: 1) == .retry(after: .milliseconds(400)))
        guard case .giveUp(let giveUp) = retry.failed(.transient(reason: "503"), unit: 1) else {
            Issue.record("expected to give up after 3 retries")
            return
        }
        #expect(giveUp.attempts == 5)
        var jittered = RetryStateMachine(policy: .store(maxRetries: 9))
        for _ in 0..<9 {
            #expect(jittered.failed(.transient(reason: "x"), unit: 0) == .retry(after: .zero))
        }
        #expect(RetryPolicy.store(maxRetries: 1).backoff.delay(attempt: 20, unit: 1) == .seconds(10))
    }

    @Test(
        "batches close on count and on bytes; an oversized record goes alone; nothing is lost or reordered",
        arguments: [1, 3, 7, 100]
    )
    func batches(maxCount: Int) {
        let sizes = [5, 5, 5, 50, 1, 1, 1, 1, 20, 5]
        let batches = RecordBatches.split(Array(sizes.indices), maxCount: maxCount, maxBytes: 12, size: { sizes[$0] })
        #expect(batches.flatMap { $0 } == Array(sizes.indices))
        for batch in batches {
            #expect(batch.count <= maxCount)
            let bytes = batch.reduce(0) { $0 + sizes[$1] }
            #expect(bytes <= 12 || batch.count == 1, "batch \(Array(batch)) holds \(bytes) bytes")
        }
    }

    @Test("COPY text escapes tabs, newlines, backslashes and drops NUL; vectors read back exactly")
    func copyText() throws {
        let record = VectorRecord(
            id: VectorID(rawValue: "00ff"),
            documentKey: "a\tb/c.txt",
            ordinal: 3,
            text: "line\none\\two\r\u{0}end",
            vector: [0.1, -2.5e-7, 3, .leastNonzeroMagnitude],
            metadata: ["k": "v\tw"]
        )
        let line = String(decoding: PgvectorCopy.encode([record]), as: UTF8.self)
        let fields = line.dropLast().split(separator: "\t", omittingEmptySubsequences: false)
        #expect(fields.count == 6)
        #expect(fields[1] == #"a\tb/c.txt"#)
        #expect(fields[3] == #"line\none\\two\rend"#)
        // JSON escapes the tab as \t, and COPY escapes that backslash.
        #expect(fields[4] == #"{"k":"v\\tw"}"#)
        #expect(PgvectorCopy.parseVector(String(fields[5])) == record.vector)
        var json: [UInt8] = []
        PgvectorCopy.appendJSONObject(["b": "q\"\\\u{1}\n", "a": "é"], to: &json)
        let decoded = try JSONSerialization.jsonObject(with: Data(json)) as? [String: String]
        #expect(decoded == ["b": "q\"\\\u{1}\n", "a": "é"])
        #expect(String(decoding: json, as: UTF8.self).hasPrefix(#"{"a":"#))
        #expect(PgvectorCopy.arrayLiteral([VectorID(rawValue: "ab"), VectorID(rawValue: "cd")]) == "{ab,cd}")
    }

    @Test("pgvector: table names are plain or quoted identifiers, schema.table at most")
    func pgvectorSettings() {
        #expect(PgvectorSink.validIdentifier("chunks"))
        #expect(PgvectorSink.validIdentifier("search.chunks_2"))
        #expect(!PgvectorSink.validIdentifier("chunks; DROP TABLE x"))
        #expect(!PgvectorSink.validIdentifier("a.b.c"))
        #expect(!PgvectorSink.validIdentifier("1abc"))
        #expect(!PgvectorSink.validIdentifier(#""unclosed"#))
        #expect(!PgvectorSink.validIdentifier(#""a"b"#))
        #expect(!PgvectorSink.validIdentifier(#""""#))
        #expect(!PgvectorSink.validIdentifier("\"a\u{0}b\""))
        #expect(!PgvectorSink.validIdentifier("\"a\"\u{301}b\""))  // a quote, then an accent: the name ends there
        #expect(!PgvectorSink.validIdentifier("\"" + String(repeating: "é", count: 32) + "\""))  // 64 bytes
    }

    @Test(
        "pgvector: a quoted table or schema name keeps its dots, quotes and case",
        arguments: [
            (#""my.table""#, nil, "my.table", #""my.table""#),
            (#""my.schema".chunks"#, "my.schema", "chunks", #""my.schema"."chunks""#),
            (#""my.schema"."my.table""#, "my.schema", "my.table", #""my.schema"."my.table""#),
            (#"search.Mixed_Case"#, "search", "Mixed_Case", #""search"."Mixed_Case""#),
            (#""say ""hi""""#, nil, #"say "hi""#, #""say ""hi""""#),
            ("\"a\"\"\u{301}b\"", nil, "a\"\u{301}b", "\"a\"\"\u{301}b\""),
        ] as [(String, String?, String, String)]
    )
    func pgvectorTableNames(text: String, schema: String?, table: String, quoted: String) throws {
        let name = try #require(PgvectorTableName(parsing: text))
        #expect(name.schema == schema)
        #expect(name.table == table)
        #expect(name.quoted == quoted)
        #expect(PgvectorTableName(parsing: name.text) == name, "\(name.text) reads back")
        #expect(PgvectorSink.table(PgvectorSink.table(text, adding: "_g2"), removing: "_g2") == name.text)
        #expect(PgvectorTableName(parsing: PgvectorSink.table(text, adding: "_g2"))?.table == table + "_g2")
        let configuration = PgvectorSink.foldingConfiguration(table: name)
        #expect(configuration == (name.quotedSchema.map { $0 + "." } ?? "") + "sluice_english_unaccent")
    }

    @Test("pgvector: URLs with passwords are refused")
    func pgvectorURLs() {
        #expect(PgvectorSink.urlHasPassword("postgresql://me:secret@db/x"))
        #expect(PgvectorSink.urlHasPassword("host=db password=secret"))
        #expect(!PgvectorSink.urlHasPassword("postgresql://me@db:5432/x"))
        #expect(PgvectorSink.redacted("postgresql://me@db:5432/x") == "user=me dbname=x host=db port=5432")
    }

    /// libpq reads `sink.url` as a URI (percent-decoded, `?key=value` parameters) or as key/value conninfo
    /// (`key = value`, spaces allowed): a password must be refused in every spelling libpq accepts, and no
    /// spelling may reach a message or the sink's name.
    @Test(
        "pgvector: a password in sink.url is refused in every form libpq reads, and never echoed",
        arguments: [
            "postgresql://me:SECRET@db/x",
            "postgresql://me@db/x?password=SECRET",
            "postgresql://me@db/x?pass%77ord=SECRET",
            "postgresql://me@db/x?%70assword=SECRET&sslmode=disable",
            "postgres://db/x?sslpassword=SECRET",
            "host=db password=SECRET",
            "host=db password = SECRET",
            "host=db   password='SECRET' dbname=x",
            "dbname=x sslpassword=SECRET",
        ]
    )
    func pgvectorPasswordForms(url: String) {
        #expect(PgvectorSink.urlHasPassword(url), "\(url)")
        #expect(!PgvectorSink.redacted(url).contains("SECRET"), "\(PgvectorSink.redacted(url))")
        do {
            _ = try PgvectorSink(settings: .init(url: url, password: nil, table: "t"))
            Issue.record("accepted \(url)")
        } catch let error as SluiceError {
            #expect(error.code == .configuration)
            #expect(!error.description.contains("SECRET"), "\(error)")
        } catch {
            Issue.record("\(error)")
        }
    }

    @Test("pgvector: URLs and conninfo strings without a password are accepted, and shown without secrets")
    func pgvectorURLsWithoutPassword() throws {
        for url in [
            "postgresql://me@db:5432/x", "postgresql://db/x?application_name=password_rotation",
            "host=db port=5432 dbname=passwords user=me",
        ] {
            #expect(!PgvectorSink.urlHasPassword(url), "\(url)")
            let sink = try PgvectorSink(settings: .init(url: url, password: "from-env", table: "t"))
            #expect(!sink.name.contains("from-env"))
        }
        #expect(PgvectorSink.redacted("host=db port=5432 dbname=x user=me").contains("db"))
    }

    @Test(
        "Pinecone: ids are documentKey#id within 512 bytes; metadata stays under 40 KB with long text trimmed, never null"
    )
    func pineconeRecords() throws {
        let sink = PineconeSink(settings: PineconeSink.Settings(apiKey: "k", index: "i"))
        let longKey = String(repeating: "é", count: 400)
        let id = VectorID(rawValue: String(repeating: "a", count: 32))
        let recordID = PineconeSink.recordID(key: longKey, id: id)
        #expect(recordID.utf8.count <= 512)
        #expect(PineconeSink.vectorID(recordID) == id)
        #expect(PineconeSink.recordID(key: "docs/a.md", id: id) == "docs/a.md#\(id.rawValue)")

        let text = String(repeating: "naïve text ", count: 10_000)
        let record = VectorRecord(
            id: id,
            documentKey: "docs/a.md",
            ordinal: 2,
            text: text,
            vector: [1],
            metadata: ["page": "3", "empty": ""]
        )
        let metadata = sink.metadata(of: record)
        let bytes = try JSONEncoder().encode(metadata).count
        #expect(bytes <= PineconeSink.maxMetadataBytes)
        #expect(metadata["text_truncated"] == .string("true"))
        #expect(metadata["text_bytes"] == .int(text.utf8.count))
        #expect(metadata["empty"] == nil, "empty values are left out")
        guard case .string(let kept) = metadata["text"] else {
            Issue.record("no text")
            return
        }
        #expect(text.hasPrefix(kept) && kept.utf8.count <= 32_000)

        let short = VectorRecord(id: id, documentKey: "k", ordinal: 0, text: "short", vector: [1])
        #expect(sink.metadata(of: short)["text_truncated"] == nil)
    }

    /// A writable JSONL store at `path` once the one before it is gone: the store's writer lock is released
    /// by its `deinit`, which runs on its executor's thread a moment after the last call returns (the job
    /// that resumed the caller still holds it), so an open at once in the same process may find it held.
    static func writableJSONL(_ path: URL, shards: Int) async throws -> JSONLSink {
        let deadline = ContinuousClock.now + .seconds(30)
        while true {
            do {
                return try JSONLSink(path: path, shards: shards)
            } catch let error as SluiceError where error.code == .lockHeld && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(5))
            }
        }
    }

    @Test("JSONL: a journal left by a crash is replayed, a torn last line is ignored, and finish compacts it")
    func jsonlJournal() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "sluice-jsonl-\(UInt32.random(in: 0...UInt32.max))"
        )
        defer { TemporaryDirectory.remove(folder) }
        let records = (0..<6).map { i in
            VectorRecord(
                id: VectorID(rawValue: String(format: "%032x", i * 7919)),
                documentKey: "d\(i % 2)",
                ordinal: i,
                text: "t\(i)",
                vector: [Float(i), 1]
            )
        }
        do {
            let sink = try JSONLSink(path: folder, shards: 2)
            try await sink.prepare(embedder: EmbedderIdentity(provider: "p", model: "m", dimensions: 2))
            try await sink.upsert(records)
            try await sink.delete([records[1].id])
            // No finish: as if the process died here. Then a write torn by the crash.
            let journal = folder.appendingPathComponent("journal.jsonl")
            let handle = try FileHandle(forWritingTo: journal)
            handle.seekToEndOfFile()
            handle.write(Data(#"{"op":"upsert","record":{"id":"tor"#.utf8))
            try handle.close()
        }
        let reopened = try await Self.writableJSONL(folder, shards: 2)
        #expect(try await reopened.count() == 5)
        #expect(try await reopened.existing([records[1].id, records[2].id]) == [records[2].id])
        try await reopened.finish()
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("journal.jsonl").path))
        let lines = try ["part-00000.jsonl", "part-00001.jsonl"].flatMap { name in
            try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8).split(separator: "\n")
        }
        #expect(lines.count == 5)
        // A reader: the store has one writer at a time, and `reopened` is still open.
        let final = try JSONLSink(path: folder, shards: 2, readOnly: true)
        let ids = try #require(try await final.listIDs())
        #expect(ids == Set(records.map(\.id)).subtracting([records[1].id]))
    }

    @Test(
        "JSONL: a torn last journal line is cut off before the next append, so a second crash loses nothing acknowledged"
    )
    func jsonlTornJournalTail() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(
            "sluice-jsonl-torn-\(UInt32.random(in: 0...UInt32.max))/store.jsonl"
        )
        defer { TemporaryDirectory.remove(file.deletingLastPathComponent()) }
        let journal = URL(fileURLWithPath: file.path + ".journal")
        let records = (0..<4).map { i in
            VectorRecord(
                id: VectorID(rawValue: String(format: "%032x", i * 104_729 + 1)),
                documentKey: "d",
                ordinal: i,
                text: "t\(i)",
                vector: [Float(i), 1]
            )
        }
        let embedder = EmbedderIdentity(provider: "p", model: "m", dimensions: 2)
        do {
            let sink = try JSONLSink(path: file, shards: 1)
            try await sink.prepare(embedder: embedder)
            try await sink.upsert(Array(records[0..<2]))
            // Killed mid-write: half a line, no newline.
            let handle = try FileHandle(forWritingTo: journal)
            handle.seekToEndOfFile()
            handle.write(Data(#"{"op":"upsert","record":{"id":"tor"#.utf8))
            try handle.close()
        }
        do {
            // The next run replays the journal, appends (acknowledged), and is killed too (no finish).
            let sink = try await Self.writableJSONL(file, shards: 1)
            #expect(try await sink.count() == 2)
            try await sink.upsert([records[2]])
            try await sink.upsert([records[3]])
            try await sink.delete([records[0].id])
        }
        let bytes = try Data(contentsOf: journal)
        #expect(bytes.last == 0x0A, "the journal ends with a whole line")
        #expect(
            !String(decoding: bytes, as: UTF8.self).contains(#""id":"tor{"#),
            "an append was glued onto the torn line"
        )
        let reopened = try await Self.writableJSONL(file, shards: 1)
        let ids = try #require(try await reopened.listIDs())
        #expect(ids == Set(records[1...].map(\.id)), "every acknowledged write survives the second crash")
    }
}
