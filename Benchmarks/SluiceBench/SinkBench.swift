import ArgumentParser
import Foundation
import SluiceCore
import SluiceSinks
import SluiceTesting

/// Upsert throughput of the pgvector and Chroma sinks against each store's own bulk path, on the same
/// rows in the same run: `psql \copy` for PostgreSQL, the chromadb Python client's batch `add` and
/// `upsert` for Chroma. Both stores run on loopback (Sources/SluiceTesting/StandIns/pgvector_server.py,
/// chroma_server.py). Each repeat loads fresh tables or collections; the order of the sink and its
/// references alternates between repeats, and medians are printed at the end.
struct SinkBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sinks",
        abstract: "Vectors/s upserted into pgvector and Chroma, beside each store's own bulk path."
    )

    @Option(help: "Vectors to load.") var count = 100_000
    @Option(help: "Dimensions.") var dimensions = 384
    @Option(help: "Records per upsert call (the pipeline's sink.batch).") var batch = 512
    @Option(help: "Concurrent writers (the pipeline's run.upsert_parallelism).") var writers = 2
    @Option(help: "Repetitions (medians are printed).") var repeats = 1
    @Option(help: "pgvector: vectors for the staging/upsert path into a non-empty, indexed table (0: not measured).")
    var stagingCount = 0
    @Flag(inversion: .prefixedNo, help: "pgvector: build the HNSW index after the first load and time it.") var index =
        true
    @Option(parsing: .upToNextOption, help: "Stores to measure: pgvector, chroma.") var stores = ["pgvector", "chroma"]

    /// One timed load of the sink beside one timed load of a reference, on the same rows.
    struct Pair {
        var store: String
        var reference: String
        var rows: Int
        var sluice: Double
        var referenceSeconds: Double
    }

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
        Self.say(
            "\(count) vectors × \(dimensions) dimensions, batches of \(batch), \(writers) writers, \(repeats) repeats"
        )
        Self.say(Self.header)
        var pairs: [Pair] = []
        for store in stores {
            switch store {
            case "pgvector": pairs += try await pgvector(records, identity, work)
            case "chroma": pairs += try await chroma(records, identity, work)
            default: throw ValidationError("unknown store \(store)")
            }
        }
        guard repeats > 1 else { return }
        Self.say("\nmedians of \(repeats)")
        Self.say(Self.header)
        var seen: [String] = []
        for pair in pairs where !seen.contains(pair.store + pair.reference) {
            seen.append(pair.store + pair.reference)
            let same = pairs.filter { $0.store == pair.store && $0.reference == pair.reference }
            Self.row(
                Pair(
                    store: pair.store,
                    reference: pair.reference,
                    rows: pair.rows,
                    sluice: median(same.map(\.sluice)),
                    referenceSeconds: median(same.map(\.referenceSeconds))
                )
            )
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
                id: VectorID(documentKey: key, ordinal: i % 50, chunkHash: ContentHash(utf8: text + String(i))),
                documentKey: key,
                ordinal: i % 50,
                text: text,
                vector: vector,
                metadata: ["offset": .int(i * 10), "tokens": 28]
            )
        }
    }

    /// Upserts through the sink with `writers` concurrent writers; returns seconds.
    func load(_ sink: any VectorSink, _ records: [VectorRecord]) async throws -> Double {
        let batches = stride(from: 0, to: records.count, by: batch).map {
            Array(records[$0..<min($0 + batch, records.count)])
        }
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

    /// Runs `sluice` and `reference` in the order of the repeat (the sink first in even repeats).
    static func alternating(
        _ repeatIndex: Int,
        _ sluice: () async throws -> Void,
        reference: () async throws -> Void
    ) async throws {
        if repeatIndex % 2 == 0 {
            try await sluice()
            try await reference()
        } else {
            try await reference()
            try await sluice()
        }
    }

    static let header = "store     sluice s  sluice vec/s  reference                          ref s  ref vec/s  ratio"

    static func row(_ pair: Pair) {
        say(
            pair.store.padding(toLength: 10, withPad: " ", startingAt: 0)
                + String(format: "%8.2f  %12.0f  ", pair.sluice, Double(pair.rows) / pair.sluice)
                + pair.reference.padding(toLength: 33, withPad: " ", startingAt: 0)
                + String(
                    format: "%6.2f  %9.0f  %4.0f%%",
                    pair.referenceSeconds,
                    Double(pair.rows) / pair.referenceSeconds,
                    pair.referenceSeconds / pair.sluice * 100
                )
        )
    }

    static func check(_ stored: Int, _ expected: Int, _ store: String) throws {
        guard stored == expected else {
            throw ValidationError("\(store) holds \(stored) vectors after loading \(expected)")
        }
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

    /// Seconds taken by `body`.
    static func timed(_ body: () async throws -> Void) async throws -> Double {
        let clock = ContinuousClock()
        let start = clock.now
        try await body()
        return seconds(start.duration(to: clock.now))
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
