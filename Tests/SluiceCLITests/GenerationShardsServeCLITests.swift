import Foundation
import SluiceClient
import Testing

/// Every reader of a sharded deployment on pgvector, Chroma, Qdrant or Pinecone (its records in a coordination
/// store, a real PostgreSQL) follows a promote made with another
/// shard's state (on another machine, as far as the states go: nothing but the store links them): `sluice
/// search` with a third shard's state, and a running `sluice serve` over a second one, without a restart
/// (docs/GENERATIONS.md, "Sharded deployments"). On Chroma and Qdrant the serve's poll reads the manifest
/// from the highest version it has seen.
@Suite(.serialized)
struct GenerationShardsServeCLITests {
    @Test(
        "a promote made with shard 0's state switches search with shard 1's and a running serve over shard 2's",
        arguments: [
            GenerationShardsCLITests.Deployment.pgvector, .chroma, .qdrant, .pineconeCoordinated, .pineconeS3,
        ]
    )
    func readersOfEveryShardFollow(_ store: GenerationShardsCLITests.Deployment) async throws {
        let (ws, deployment) = try await GenerationShardsCLITests.setUp(
            "generation-shards-serve",
            store,
            documents: 10,
            seed: 0x6E_0053
        )
        defer {
            deployment.store?.stop()
            ws.cleanUp()
        }
        let count = GenerationShardsCLITests.count
        let shards = try await GenerationShardsCLITests.startCandidate(ws, deployment, building: Array(0..<count))

        let query = "configuration file"
        let old = try await GenerationServeCLITests.cliSearch(ws, shards[1], query)
        let server = try await ServeProcess.start(ws, shards[2])
        let client = server.client()
        #expect(try await client.search(SearchRequest(query: query, k: 5, mode: "vector")).results.map(\.id) == old)

        let promoted = try await GenerationCLITests.generation(ws, "promote", shards[0])
        #expect(promoted.exitCode == 0, "\(promoted)")
        // Shard 1's state was not used by the promote: its search reads the database's manifest first.
        let expected = try await GenerationServeCLITests.cliSearch(ws, shards[1], query)
        #expect(expected != old, "the two generations answer alike, or shard 1's state did not follow the promote")
        #expect(try await GenerationServeCLITests.cliSearch(ws, shards[0], query) == expected)

        try await GenerationServeCLITests.expectFollows(client, query, from: old, to: expected)
        // A second change, from the version the serve's poll saw last: a rollback with shard 1's state.
        let rolledBack = try await GenerationCLITests.generation(ws, "rollback", shards[1])
        #expect(rolledBack.exitCode == 0, "\(rolledBack)")
        try await GenerationServeCLITests.expectFollows(client, query, from: expected, to: old)
        let stopped = try await server.stop()
        #expect(stopped.exitCode == 0, "\(stopped)")
    }
}
