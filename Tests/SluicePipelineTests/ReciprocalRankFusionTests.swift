import SluiceCore
import Testing

@testable import SluicePipeline

@Suite struct ReciprocalRankFusionTests {
    static func hits(_ ids: [String]) -> [SearchHit] {
        ids.map {
            SearchHit(
                score: 1,
                record: VectorRecord(id: VectorID(rawValue: $0), documentKey: "d", ordinal: 0, text: $0, vector: [1])
            )
        }
    }

    @Test(
        "agreement between rankings wins; a record in one ranking only ranks by its rank; ties keep the first ranking's order"
    )
    func fusionOrder() {
        let fused = ReciprocalRankFusion(k: 60).fuse([Self.hits(["a", "b", "c"]), Self.hits(["c", "a", "d", "e"])])
        // a: 1/61 + 1/62, c: 1/63 + 1/61, b: 1/62, d: 1/63, e: 1/64
        #expect(fused.map(\.record.id.rawValue) == ["a", "c", "b", "d", "e"])
        #expect(abs(fused[0].score - (1.0 / 61 + 1.0 / 62)) < 1e-12)
        let tie = ReciprocalRankFusion(k: 10).fuse([Self.hits(["x", "y"]), Self.hits(["z", "w"])])
        #expect(tie.map(\.record.id.rawValue) == ["x", "z", "y", "w"])
    }

    @Test("a smaller constant lets one ranking's first place beat a record both rankings hold lower down")
    func smallerConstantFavoursTopRanks() {
        let vector = Self.hits(["v1", "both", "v3"])
        let keyword = Self.hits(["k1", "k2", "k3", "k4", "k5", "both"])
        #expect(ReciprocalRankFusion(k: 60).fuse([vector, keyword]).first?.record.id.rawValue == "both")
        #expect(ReciprocalRankFusion(k: 1).fuse([vector, keyword]).first?.record.id.rawValue == "v1")
    }
}
