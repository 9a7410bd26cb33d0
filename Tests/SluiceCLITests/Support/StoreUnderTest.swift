import Foundation
import SluiceCore
import SluiceTesting
import Testing

/// A vector store for the sink tests: the server behind it (a real PostgreSQL+pgvector or Chroma, or a
/// validating Qdrant/Pinecone stand-in, all on loopback), and the `--set sink.…` settings of a target.
final class StoreUnderTest: Sendable {
    enum Kind: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case jsonl, pgvector, chroma, qdrant, pinecone
        var testDescription: String { rawValue }
        /// Whether the store returns the vectors exactly as written (Chroma normalizes for cosine).
        var exactVectors: Bool { self != .chroma }
    }

    /// Environment variables the secrets are read from (set in this process; sluice inherits them).
    static let passwordVariable = "SLUICE_TEST_PG_PASSWORD"
    static let apiKeyVariable = "SLUICE_TEST_STORE_KEY"
    /// The variables an S3 coordination store's keys are in.
    static let s3KeyVariable = "SLUICE_TEST_COORD_S3_KEY"
    static let s3SecretVariable = "SLUICE_TEST_COORD_S3_SECRET"
    static let password = "pw-\(UInt32.random(in: 0...UInt32.max))"
    static let apiKey = "key-\(UInt32.random(in: 0...UInt32.max))"

    let kind: Kind
    let server: StandInServer?
    /// For Chroma with faults: a proxy in front of the real server that injects them.
    let proxy: StandInServer?
    /// Where the targets keep their generation records instead of the store (Pinecone's
    /// `generations.coordination`): a real PostgreSQL, or an S3 bucket (moto behind `s3_server.py`).
    enum Coordination: Sendable {
        case postgres, s3
    }

    /// The kind of ``coordination``.
    let coordinationKind: Coordination?
    /// A real PostgreSQL (or S3) the targets name as their coordination store (`generations.coordination`: Pinecone's
    /// sharded generations), when asked for.
    let coordination: StandInServer?
    /// The coordination server's folder (outside the workspace: ``stop()`` removes it).
    let coordinationFolder: URL?
    let directory: URL

    private init(
        kind: Kind,
        server: StandInServer?,
        proxy: StandInServer? = nil,
        coordination: StandInServer? = nil,
        coordinationKind: Coordination? = nil,
        coordinationFolder: URL? = nil,
        directory: URL
    ) {
        self.kind = kind
        self.server = server
        self.proxy = proxy
        self.coordination = coordination
        self.coordinationKind = coordinationKind
        self.coordinationFolder = coordinationFolder
        self.directory = directory
    }

    /// Where sluice talks to the store (the fault proxy when there is one).
    var endpoint: StandInServer? { proxy ?? server }

    /// Starts the store's server (`faultEvery`: the stand-ins fail every Nth write, see store_standin.py) and,
    /// with `coordination`, a PostgreSQL server (or an S3 stand-in) the targets keep their generation records in.
    static func start(
        _ kind: Kind,
        in workspace: Workspace,
        faultEvery: Int = 0,
        coordination: Coordination? = nil
    ) async throws -> StoreUnderTest {
        setenv(passwordVariable, password, 1)
        setenv(apiKeyVariable, apiKey, 1)
        let directory = workspace.root.appendingPathComponent("store-\(kind.rawValue)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let faults = faultEvery > 0 ? ["--fault-every", String(faultEvery)] : []
        let server: StandInServer?
        switch kind {
        case .jsonl: server = nil
        case .pgvector:
            server = try await StandInServer.launch(
                script: "pgvector_server.py",
                arguments: [directory.path, password]
            )
        case .chroma: server = try await StandInServer.launch(script: "chroma_server.py", arguments: [directory.path])
        case .qdrant:
            server = try await StandInServer.launch(
                script: "qdrant_standin.py",
                arguments: ["--api-key", apiKey] + faults
            )
        case .pinecone:
            server = try await StandInServer.launch(
                script: "pinecone_standin.py",
                arguments: ["--api-key", apiKey] + faults
            )
        }
        var proxy: StandInServer?
        if kind == .chroma, faultEvery > 0, let server {
            proxy = try await StandInServer.launch(
                script: "fault_proxy.py",
                arguments: ["--target", server.baseURL] + faults
            )
        }
        var coordinationServer: StandInServer?
        var coordinationFolder: URL?
        if coordination == .s3 {
            setenv(s3KeyVariable, "sluice-test-key", 1)
            setenv(s3SecretVariable, "sluice-test-secret", 1)
            do {
                coordinationServer = try await StandInServer.launch(
                    script: "s3_server.py",
                    arguments: ["--bucket", "coordination"]
                )
            } catch {
                proxy?.stop()
                server?.stop()
                throw error
            }
        }
        if coordination == .postgres {
            // A short path of its own: PostgreSQL's socket goes in it, and a socket's path is at most 107 bytes.
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
                "sluice-coord-\(UInt32.random(in: 0...UInt32.max))"
            )
            coordinationFolder = folder
            do {
                coordinationServer = try await StandInServer.launch(
                    script: "pgvector_server.py",
                    arguments: [folder.path, password]
                )
            } catch {
                proxy?.stop()
                server?.stop()
                TemporaryDirectory.remove(folder)
                throw error
            }
        }
        return StoreUnderTest(
            kind: kind,
            server: server,
            proxy: proxy,
            coordination: coordinationServer,
            coordinationKind: coordination,
            coordinationFolder: coordinationFolder,
            directory: directory
        )
    }

    /// The `--set` settings naming the coordination store (none without one).
    var coordinationArguments: [String] {
        guard let coordination else { return [] }
        if coordinationKind == .s3 {
            return [
                "generations.coordination=s3://coordination/shards", "generations.s3.endpoint=\(coordination.baseURL)",
                "generations.s3.access_key_env=\(Self.s3KeyVariable)",
                "generations.s3.secret_key_env=\(Self.s3SecretVariable)",
            ]
            .flatMap { ["--set", $0] }
        }
        return [
            "generations.coordination=postgresql://postgres@127.0.0.1:\(coordination.port)/postgres",
            "generations.password_env=\(Self.passwordVariable)",
        ].flatMap { ["--set", $0] }
    }

    func stop() {
        coordination?.stop()
        if let coordinationFolder { TemporaryDirectory.remove(coordinationFolder) }
        proxy?.stop()
        server?.stop()
    }

    /// The `--set` settings of a sink named `name` (its own table, collection, index or file).
    func sinkArguments(_ name: String) -> [String] {
        var settings = ["sink.kind=\(kind.rawValue)"]
        switch kind {
        case .jsonl:
            settings.append("sink.path=\(directory.appendingPathComponent(name).path)")
            settings.append("sink.shards=3")
        case .pgvector:
            settings += [
                "sink.url=postgresql://postgres@127.0.0.1:\(server!.port)/postgres",
                "sink.password_env=\(Self.passwordVariable)", "sink.table=t_\(name)",
            ]
        case .chroma:
            settings += [
                "sink.url=\(endpoint!.baseURL)", "sink.collection=c_\(name)", "sink.tenant=sluice_tests",
                "sink.database=db_tests",
            ]
        case .qdrant:
            settings += [
                "sink.url=\(server!.baseURL)", "sink.collection=\(name)", "sink.api_key_env=\(Self.apiKeyVariable)",
                "sink.batch=64",
            ]
        case .pinecone:
            settings += [
                "sink.url=\(server!.baseURL)", "sink.index=\(name)", "sink.namespace=tests",
                "sink.api_key_env=\(Self.apiKeyVariable)", "sink.batch=100",
            ]
        }
        return settings.flatMap { ["--set", $0] } + coordinationArguments
    }

    /// A target with its own state folder and sink `sinkName` (targets may share a sink).
    func target(_ workspace: Workspace, _ name: String, sinkName: String? = nil) -> Workspace.Target {
        let local = workspace.target(name)
        return Workspace.Target(state: local.state, index: local.index, sink: sinkArguments(sinkName ?? name))
    }

    /// The stand-in's request statistics (`GET /_standin/stats`).
    func standInStats() throws -> [String: Int] {
        guard let server = endpoint, kind != .jsonl, kind != .pgvector else { return [:] }
        return try server.standInStats()
    }
}

/// Expects the same records; vectors equal, or within `tolerance` when the store normalizes them.
func expectSameRecords(
    _ actual: Data,
    _ expected: Data,
    exact: Bool,
    _ what: String,
    sourceLocation: SourceLocation = #_sourceLocation
) throws {
    if exact {
        expectSameExport(actual, expected, what, sourceLocation: sourceLocation)
        return
    }
    let a = try Export.records(actual)
    let e = try Export.records(expected)
    #expect(a.count == e.count, "\(what): \(a.count) records vs \(e.count)", sourceLocation: sourceLocation)
    for (x, y) in zip(a, e) {
        var xs = x
        var ys = y
        xs.vector = []
        ys.vector = []
        #expect(xs == ys, "\(what): record \(y.id) differs", sourceLocation: sourceLocation)
        let close = x.vector.count == y.vector.count && zip(x.vector, y.vector).allSatisfy { abs($0 - $1) <= 1e-6 }
        #expect(close, "\(what): vector of \(y.id) differs beyond 1e-6", sourceLocation: sourceLocation)
    }
}
