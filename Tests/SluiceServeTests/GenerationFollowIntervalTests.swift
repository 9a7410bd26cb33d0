import SluiceCore
import SluiceState
import Testing

@testable import SluiceServe

/// How often a running `sluice serve` asks the store for its generation records: every look (once a second)
/// where a look costs a file, a row or a point, every fourth on Pinecone without a coordination store, where
/// it is a fetch billed in read units.
@Suite struct GenerationFollowIntervalTests {
    static func configuration(
        _ kind: PipelineConfiguration.Sink.Kind,
        coordination: String? = nil,
        coordinationEnv: String? = nil
    ) -> PipelineConfiguration {
        var configuration = PipelineConfiguration()
        configuration.sink.kind = kind
        configuration.generations.coordination = coordination
        configuration.generations.coordinationEnv = coordinationEnv
        return configuration
    }

    @Test("Pinecone without a coordination store: every fourth look, inside the drop's grace")
    func pineconeAlone() {
        let every = SluiceServer.generationFollowEvery(Self.configuration(.pinecone))
        #expect(every == 4)
        #expect(Double(every) < GenerationManifest.followGrace)
    }

    @Test("Pinecone with a coordination store, and every other store: every look")
    func everyLook() {
        #expect(
            SluiceServer.generationFollowEvery(Self.configuration(.pinecone, coordination: "postgresql://u@h/db")) == 1
        )
        #expect(SluiceServer.generationFollowEvery(Self.configuration(.pinecone, coordinationEnv: "COORD_URL")) == 1)
        for kind in [PipelineConfiguration.Sink.Kind.local, .jsonl, .pgvector, .chroma, .qdrant] {
            #expect(SluiceServer.generationFollowEvery(Self.configuration(kind)) == 1, "\(kind)")
        }
    }
}
