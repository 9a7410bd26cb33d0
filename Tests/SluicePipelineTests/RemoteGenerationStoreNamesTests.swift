import SluiceCore
import Testing

@testable import SluicePipeline

/// The names of a pgvector deployment's generations (`RemoteGenerationStore.swift`): added to the table's
/// part of `sink.table`, inside its quotes, and taken off again to find the original's.
@Suite struct RemoteGenerationStoreNamesTests {
    @Test(
        "a generation's table, the stable view and the original's table, for plain and quoted names",
        arguments: [
            ("chunks", "chunks_g2", "chunks_active"),
            ("search.chunks", "search.chunks_g2", "search.chunks_active"),
            (#""my.table""#, #""my.table_g2""#, #""my.table_active""#),
            (#""my.schema"."my.table""#, #""my.schema"."my.table_g2""#, #""my.schema"."my.table_active""#),
        ]
    )
    func pgvectorNames(table: String, generation: String, view: String) throws {
        var configuration = PipelineConfiguration()
        configuration.sink.kind = .pgvector
        configuration.sink.table = table
        let store = try #require(RemoteGenerationStore(configuration: configuration))
        #expect(store.name(of: "g2") == generation)
        #expect(store.stableName == view)
        // Pointed at g2, the store still finds the original's table.
        var pointed = configuration
        store.point(&pointed, at: "g2")
        pointed.generation = "g2"
        #expect(pointed.sink.table == generation)
        #expect(RemoteGenerationStore(configuration: pointed)?.baseName == table)
    }
}
