import Foundation
import SluiceCore
import SluiceHTTP
import SluiceSinks
import SluiceTesting
import Testing

@testable import SluicePipeline

#if canImport(Glibc)
import Glibc
#endif

/// The S3 coordination store of a sharded deployment on Pinecone (`generations.coordination: s3://…`,
/// docs/GENERATIONS.md, "Pinecone with a coordination store"), against moto's S3 on loopback
/// (`s3_server.py`, which runs each `If-None-Match` PUT alone, as AWS S3 keeps them atomic): the manifest's
/// insert-once write lets exactly one of many racing writers through, a `409` is retried, deployments sharing
/// a bucket never see each other's records, and the keys are read as the S3 source reads its own.
@Suite(.serialized)
struct S3CoordinationStoreTests {
    static let bucket = "coordination"
    static let environment = ["COORD_KEY": "sluice-test-key", "COORD_SECRET": "sluice-test-secret"]

    static func settings(_ server: StandInServer) -> [String] {
        [
            "sink.kind=pinecone", "sink.index=docs",
            "generations.coordination=s3://\(bucket)/sluice/records/",
            "generations.s3.endpoint=\(server.baseURL)", "generations.s3.access_key_env=COORD_KEY",
            "generations.s3.secret_key_env=COORD_SECRET", "generations.s3.max_retries=3",
        ]
    }

    /// A store of its own (as a separate process has), for the records of `deployment`.
    static func store(
        _ server: StandInServer,
        _ deployment: String = "pinecone api.pinecone.io index docs namespace n"
    ) throws -> S3CoordinationStore {
        let configuration = try PipelineConfiguration.load(file: nil, overrides: settings(server))
        return S3CoordinationStore(
            bucket: bucket,
            prefix: "sluice/records",
            settings: configuration.generations.s3,
            credentials: try S3Credentials.resolve(configuration.generations.s3, environment: environment),
            deployment: deployment
        )
    }

    static func data(_ text: String) -> Data { Data(text.utf8) }

    static func launch() async throws -> StandInServer {
        try await StandInServer.launch(script: "s3_server.py", arguments: ["--bucket", bucket])
    }

    /// The stand-in's request counts (`/_standin/stats`).
    static func stats(_ server: StandInServer) async throws -> [String: Int] {
        let answer = try await HTTPClient.shared.send(HTTPRequest(url: server.baseURL + "/_standin/stats"))
        return try JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: Int] ?? [:]
    }

    @Test(
        "of 12 writers expecting the same version (each its own store, as separate processes are), exactly one wins; a stale writer loses and writes nothing"
    )
    func oneOfManyRacingWritersWins() async throws {
        let server = try await Self.launch()
        defer { server.stop() }
        for expected in [0, 1] {
            let winners = try await racingWriters(12) { writer in
                try await Self.store(server).writeSharedRecord(
                    "manifest",
                    Self.data("v\(expected + 1) by \(writer)"),
                    expecting: expected
                )
            }
            #expect(winners.count == 1, "expecting \(expected): winners \(winners)")
            let stored = try await Self.store(server).sharedRecord("manifest")
            #expect(stored?.version == expected + 1)
            #expect(stored?.value == Self.data("v\(expected + 1) by \(winners.first ?? -1)"), "the winner's, only")
        }
        #expect(try await Self.store(server).writeSharedRecord("manifest", Self.data("stale"), expecting: 1) == false)
        let store = try Self.store(server)
        #expect(try await store.sharedRecord("manifest")?.value.count ?? 0 > 0)
        #expect(try await store.sharedRecord("manifest")?.version == 2)
        #expect(try await store.checkReachable() == 2)
        #expect(store.location.hasPrefix("s3://coordination/sluice/records/pinecone api.pinecone.io index docs"))
    }

    @Test("a 409 ConditionalRequestConflict is retried, and the retry's write is made once")
    func conflictIsRetried() async throws {
        let server = try await Self.launch()
        defer { server.stop() }
        let faults = try await HTTPClient.shared.send(
            HTTPRequest(method: "POST", url: server.baseURL + "/_standin/faults?conflict_puts=2")
        )
        #expect(faults.status == 200)
        let store = try Self.store(server)
        #expect(try await store.writeSharedRecord("manifest", Self.data("m1"), expecting: 0))
        #expect(try await Self.stats(server)["faults"] == 2, "both 409s were answered, and retried")
        #expect(try await store.versionedRecords(of: "manifest", from: 1).map(\.version) == [1])
        #expect(try await store.sharedRecord("manifest")?.value == Self.data("m1"))
    }

    @Test(
        "a shard's part is rewritten in place of its older version; deployments sharing the bucket (a / in one's name) never see each other's records"
    )
    func partsAndDeployments() async throws {
        let server = try await Self.launch()
        defer { server.stop() }
        let a = try Self.store(server, "pinecone h index docs namespace a")
        let b = try Self.store(server, "pinecone h index docs namespace a/b")
        #expect(try await a.writeSharedRecord("manifest", Self.data("a1"), expecting: 0))
        #expect(try await b.writeSharedRecord("manifest", Self.data("b1"), expecting: 0))
        for round in 0..<3 {
            #expect(try await a.writeSharedRecord("parts/g1/0-of-2", Self.data("part \(round)"), expecting: nil))
        }
        #expect(try await a.writeSharedRecord("parts/g1/0-of-20", Self.data("other"), expecting: nil))
        #expect(
            try await a.sharedRecords(prefix: "parts/")
                == ["parts/g1/0-of-2": Self.data("part 2"), "parts/g1/0-of-20": Self.data("other")]
        )
        #expect(
            try await a.versionedRecords(of: "parts/g1/0-of-2", from: 1).count == 1,
            "older versions of a part are deleted"
        )
        #expect(try await b.sharedRecords(prefix: "").keys.sorted() == ["manifest"])
        #expect(try await b.sharedRecord("manifest")?.value == Self.data("b1"))
        try await a.deleteSharedRecords(prefix: "parts/")
        #expect(try await a.sharedRecords(prefix: "").keys.sorted() == ["manifest"])
        #expect(try await a.checkReachable() == 1)
        #expect(try await b.checkReachable() == 1)
    }

    @Test(
        "the keys: generations.s3 takes the source's reach and credential keys only; no bucket, no credentials, an unknown scheme: refused, never quoting a secret"
    )
    func keys() throws {
        func open(
            _ overrides: [String],
            environment: [String: String] = Self.environment
        ) throws
            -> (any CoordinationRecordStore)?
        {
            let configuration = try PipelineConfiguration.load(
                file: nil,
                overrides: ["sink.kind=pinecone", "sink.index=docs"] + overrides
            )
            return try CoordinationStore.open(configuration, deployment: "d", environment: environment)
        }
        let named = [
            "generations.coordination=s3://bucket/p", "generations.s3.access_key_env=COORD_KEY",
            "generations.s3.secret_key_env=COORD_SECRET",
        ]
        let store = try #require(try open(named))
        #expect(store is S3CoordinationStore)
        #expect(store.location == "s3://bucket/p/d/", "\(store.location)")
        #expect(!store.location.contains("sluice-test-secret"))
        for key in ["bucket=x", "prefix=x", "concurrency=2", "list_page_size=3"] {
            #expect(throws: SluiceError.self, "generations.s3.\(key)") {
                try open(named + ["generations.s3.\(key)"])
            }
        }
        let noBucket = try #require(throws: SluiceError.self) { try open(["generations.coordination=s3:///p"]) }
        #expect(noBucket.message.contains("s3://bucket/prefix"), "\(noBucket.message)")
        let noCredentials = try #require(throws: SluiceError.self) {
            try open(
                named.dropLast(2) + ["generations.s3.access_key_env=UNSET_K", "generations.s3.secret_key_env=UNSET_S"]
            )
        }
        #expect(noCredentials.message.contains("generations.s3"), "\(noCredentials.message)")
        let other = try #require(throws: SluiceError.self) { try open(["generations.coordination=redis://x"]) }
        #expect(other.message.contains("s3://bucket/prefix"), "\(other.message)")
        #expect(try open([]) == nil)
    }

    @Test(
        "one store per location in a process: serve's poll opens the deployment once a second and reuses the store (one PostgreSQL connection, one S3 client); another deployment or URL gets its own"
    )
    func storesAreReusedPerLocation() throws {
        // Variables only this test names (a deployment reads the credentials from the process's environment).
        setenv("SLUICE_TEST_POLL_KEY", "sluice-test-key", 1)
        setenv("SLUICE_TEST_POLL_SECRET", "sluice-test-secret", 1)
        func deployment(_ overrides: [String]) throws -> AnyObject {
            let configuration = try PipelineConfiguration.load(
                file: nil,
                overrides: ["sink.kind=pinecone", "sink.index=docs", "sink.url=http://127.0.0.1:9"] + overrides
            )
            let remote = try #require(RemoteGenerationStore(configuration: configuration))
            return try #require(try StoreGenerationDeployment(remote)).records as AnyObject
        }
        let postgres = ["generations.coordination=postgresql://sluice@127.0.0.1:1/coordination"]
        let polls = try (0..<5).map { _ in try deployment(postgres) }
        #expect(polls.allSatisfy { $0 === polls[0] }, "five polls, one store")
        #expect(polls[0] is PostgresCoordinationStore)
        #expect(try deployment(postgres + ["sink.namespace=other"]) !== polls[0])
        #expect(try deployment(["generations.coordination=postgresql://sluice@127.0.0.1:1/another"]) !== polls[0])
        let s3 = [
            "generations.coordination=s3://bucket/p", "generations.s3.access_key_env=SLUICE_TEST_POLL_KEY",
            "generations.s3.secret_key_env=SLUICE_TEST_POLL_SECRET",
        ]
        let s3Polls = try (0..<5).map { _ in try deployment(s3) }
        #expect(s3Polls.allSatisfy { $0 === s3Polls[0] })
        #expect(s3Polls[0] is S3CoordinationStore)
    }

    @Test(
        "the deployment's name includes the Pinecone control plane's host: two control planes with the same index and namespace never share records"
    )
    func deploymentNameNamesTheControlPlane() throws {
        func name(_ overrides: [String]) throws -> String {
            let configuration = try PipelineConfiguration.load(
                file: nil,
                overrides: ["sink.kind=pinecone", "sink.index=docs", "sink.namespace=manuals"] + overrides
            )
            return StoreGenerationDeployment.deploymentName(
                try #require(RemoteGenerationStore(configuration: configuration))
            )
        }
        #expect(try name([]) == "pinecone api.pinecone.io index docs namespace manuals")
        #expect(try name(["sink.url=http://127.0.0.1:8123"]) == "pinecone 127.0.0.1:8123 index docs namespace manuals")
        #expect(try name(["sink.url=https://pinecone.example.com/"]) != name([]))
    }
}
