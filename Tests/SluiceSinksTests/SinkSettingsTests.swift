import SluiceCore
import Testing

@testable import SluiceSinks

/// Each store's settings come from the pipeline's `sink` section: its defaults are the section's, and
/// what a file sets reaches the store.
@Suite struct SinkSettingsTests {
    static var section: PipelineConfiguration.Sink {
        var sink = PipelineConfiguration.Sink()
        sink.metric = .dot
        sink.maxRetries = 9
        sink.timeoutSeconds = 1.5
        sink.batch = 100
        sink.collection = "c"
        sink.namespace = "ns"
        return sink
    }

    @Test func theDefaultsAreTheSections() {
        let defaults = PipelineConfiguration.Sink()
        let chroma = ChromaSink.Settings(url: "http://h", apiKey: nil)
        #expect(chroma.maxRetries == defaults.maxRetries && chroma.metric == defaults.metric.rawValue)
        #expect(
            chroma.tenant == defaults.tenant && chroma.database == defaults.database
                && chroma.collection == defaults.collection
        )
        #expect(chroma.timeout == .seconds(defaults.timeoutSeconds))
        let qdrant = QdrantSink.Settings(url: "http://h", apiKey: nil)
        #expect(qdrant.maxRetries == defaults.maxRetries && qdrant.batch == defaults.batch)
        let pinecone = PineconeSink.Settings(apiKey: "k", index: "i")
        #expect(pinecone.controlURL == PineconeSink.Settings.defaultControlURL)
        #expect(pinecone.metadataTextBytes == defaults.metadataTextBytes && pinecone.namespace == defaults.namespace)
        let pgvector = PgvectorSink.Settings(url: "postgresql://h/db", password: nil, table: "t")
        #expect(pgvector.maxRetries == defaults.maxRetries && pgvector.maxBatchBytes == defaults.maxBatchBytes)
        #expect(pgvector.connections == PipelineConfiguration.Run().upsertParallelism)
    }

    @Test func aSectionReachesEveryStore() {
        let chroma = ChromaSink.Settings(section: Self.section, apiKey: "k")
        #expect(chroma.url == ChromaSink.Settings.defaultURL)
        #expect(chroma.metric == "dot" && chroma.maxRetries == 9 && chroma.batch == 100 && chroma.collection == "c")
        #expect(chroma.timeout == .milliseconds(1500))
        let qdrant = QdrantSink.Settings(section: Self.section, apiKey: nil)
        #expect(qdrant.url == QdrantSink.Settings.defaultURL && qdrant.collection == "c" && qdrant.maxRetries == 9)
        let pinecone = PineconeSink.Settings(section: Self.section, apiKey: "k", index: "i")
        #expect(pinecone.namespace == "ns" && pinecone.metric == "dot" && pinecone.batch == 100)
        let pgvector = PgvectorSink.Settings(
            section: Self.section,
            url: "postgresql://h/db",
            password: nil,
            connections: 4
        )
        #expect(
            pgvector.metric == "dot" && pgvector.maxRetries == 9 && pgvector.connections == 4
                && pgvector.table == "sluice_chunks"
        )
    }
}
