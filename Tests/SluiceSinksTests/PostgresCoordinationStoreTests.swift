import Foundation
import SluiceCore
import SluiceTesting
import Testing

@testable import SluiceSinks

/// The coordination store of a sharded deployment on Pinecone (`generations.coordination`,
/// docs/GENERATIONS.md, "Pinecone with a coordination store"), against a real PostgreSQL: the manifest's
/// insert-once write lets exactly one of many racing writers through, whatever each process believes, and the
/// pipeline file's keys are refused where they would leak a secret or name a store that is not built.
@Suite(.serialized)
struct PostgresCoordinationStoreTests {
    static func store(
        _ postgres: PostgresForTest,
        _ deployment: String = "pinecone index docs namespace n"
    )
        -> PostgresCoordinationStore
    {
        PostgresCoordinationStore(url: postgres.url, password: "pw", deployment: deployment, maxRetries: 2)
    }

    static func data(_ text: String) -> Data { Data(text.utf8) }

    @Test(
        "of 12 writers expecting the same version (each its own store, as separate processes are), exactly one wins, on a new table and on an existing one"
    )
    func oneOfManyRacingWritersWins() async throws {
        let postgres = try await PostgresForTest.launch()
        defer { postgres.stop() }
        for expected in [0, 1] {
            let winners = try await racingWriters(12) { writer in
                try await Self.store(postgres).writeSharedRecord(
                    "manifest",
                    Self.data("v\(expected + 1) by \(writer)"),
                    expecting: expected
                )
            }
            #expect(winners.count == 1, "expecting \(expected): winners \(winners)")
            let stored = try await Self.store(postgres).sharedRecord("manifest")
            #expect(stored?.version == expected + 1)
            #expect(stored?.value == Self.data("v\(expected + 1) by \(winners.first ?? -1)"), "the winner's, only")
        }
        // A writer that read version 1 long ago loses to the version 2 made meanwhile, and writes nothing.
        #expect(try await Self.store(postgres).writeSharedRecord("manifest", Self.data("stale"), expecting: 1) == false)
        #expect(try await Self.store(postgres).sharedRecord("manifest")?.version == 2)
    }

    @Test(
        "a shard's part is rewritten in place of its older version; deployments sharing the table never see each other's records"
    )
    func partsAndDeployments() async throws {
        let postgres = try await PostgresForTest.launch()
        defer { postgres.stop() }
        let a = Self.store(postgres, "pinecone index docs namespace a")
        let b = Self.store(postgres, "pinecone index docs namespace b")
        #expect(try await a.writeSharedRecord("manifest", Self.data("a1"), expecting: 0))
        #expect(try await b.writeSharedRecord("manifest", Self.data("b1"), expecting: 0))
        for round in 0..<3 {
            #expect(try await a.writeSharedRecord("parts/g1/0-of-2", Self.data("part \(round)"), expecting: nil))
        }
        #expect(try await a.sharedRecords(prefix: "parts/") == ["parts/g1/0-of-2": Self.data("part 2")])
        #expect(try await a.versions(of: "parts/g1/0-of-2").count == 1, "older versions of a part are deleted")
        #expect(try await b.sharedRecords(prefix: "parts/").isEmpty)
        #expect(try await b.sharedRecord("manifest")?.value == Self.data("b1"))
        try await a.deleteSharedRecords(prefix: "parts/")
        #expect(try await a.sharedRecords(prefix: "").keys.sorted() == ["manifest"])
        #expect(try await a.checkReachable() == 1)
        #expect(try await b.checkReachable() == 1)
    }

    @Test(
        "a role with SELECT, INSERT and DELETE on the table and no CREATE on the schema writes and reads, once the table exists"
    )
    func writesWithoutCreatePrivilege() async throws {
        let postgres = try await PostgresForTest.launch()
        defer { postgres.stop() }
        #expect(try await Self.store(postgres).writeSharedRecord("manifest", Self.data("m1"), expecting: 0))
        let admin = try PGConnection(url: postgres.url, password: "pw")
        try admin.query("CREATE ROLE coordination_writer LOGIN PASSWORD 'writer-pw'")
        try admin.query("REVOKE CREATE ON SCHEMA public FROM PUBLIC")
        try admin.query("GRANT SELECT, INSERT, DELETE ON sluice_generation_records TO coordination_writer")
        let writer = PostgresCoordinationStore(
            url: "postgresql://coordination_writer@127.0.0.1:\(postgres.server.port)/postgres",
            password: "writer-pw",
            deployment: "pinecone index docs namespace n",
            maxRetries: 0
        )
        #expect(try await writer.writeSharedRecord("manifest", Self.data("m2"), expecting: 1))
        #expect(try await writer.writeSharedRecord("parts/g1/0-of-2", Self.data("p"), expecting: nil))
        #expect(try await writer.sharedRecord("manifest")?.value == Self.data("m2"))
        try await writer.deleteSharedRecords(prefix: "parts/")
    }

    @Test(
        "the keys: a password in generations.coordination, a URL of another scheme, both keys at once, generations.* on another store: refused, never quoting the URL"
    )
    func keysRefused() throws {
        func make(_ overrides: [String], environment: [String: String] = [:]) throws -> PostgresCoordinationStore? {
            let configuration = try PipelineConfiguration.load(
                file: nil,
                overrides: ["sink.kind=pinecone", "sink.index=docs"] + overrides
            )
            guard let (url, key) = try CoordinationStore.named(configuration, environment: environment) else {
                return nil
            }
            return try CoordinationStore.postgres(
                url: url,
                key: key,
                configuration,
                deployment: "d",
                environment: environment
            )
        }
        let secret = "s3cr3t-\(UInt32.random(in: 0...UInt32.max))"
        for url in ["postgresql://u:\(secret)@db/x", "postgresql://u@db/x?password=\(secret)"] {
            let error = try #require(throws: SluiceError.self) { try make(["generations.coordination=\(url)"]) }
            #expect(error.code == .configuration)
            #expect(error.message.contains("generations.password_env"), "\(error.message)")
            #expect(!error.message.contains(secret))
        }
        let other = try #require(throws: SluiceError.self) { try make(["generations.coordination=mysql://db/x"]) }
        #expect(other.message.contains("PostgreSQL URL"), "\(other.message)")
        #expect(throws: SluiceError.self) {
            try make(["generations.coordination=postgresql://db/x", "generations.coordination_env=V"])
        }
        #expect(throws: SluiceError.self) {
            try PipelineConfiguration.load(
                file: nil,
                overrides: ["sink.kind=qdrant", "generations.coordination=postgresql://db/x"]
            )
        }
        // The URL from a variable may carry its password; an unset variable is refused by name.
        let fromVariable = try make(
            ["generations.coordination_env=COORD_URL"],
            environment: ["COORD_URL": "postgresql://u:\(secret)@db/x"]
        )
        #expect(fromVariable?.location.contains(secret) == false, "\(fromVariable?.location ?? "")")
        let unset = try #require(throws: SluiceError.self) { try make(["generations.coordination_env=COORD_URL"]) }
        #expect(unset.message.contains("COORD_URL"))
        #expect(try make([]) == nil)
    }
}
