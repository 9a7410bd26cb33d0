import Foundation
import SluiceCore
import Testing

@testable import SluiceEmbed

/// The forward pass against the independent NumPy reference (`scripts/reference/minilm_reference.py`,
/// float64 from the same safetensors), and the embedder's contract.
@Suite struct MiniLMEmbedderTests {
    @Test func vectorsMatchTheNumPyReference() async throws {
        let embedder = try MiniLMFixtures.loadEmbedder()
        let cases = try MiniLMFixtures.lines("minilm-reference.jsonl")
        #expect(cases.count >= 40)
        let texts = try cases.map { try #require($0["text"] as? String) }
        let expected = try cases.map { try #require($0["embedding"] as? [Double]).map(Float.init) }
        let vectors = try await embedder.embed(texts)
        #expect(vectors.count == texts.count)
        var worst = 1.0
        for (index, (vector, reference)) in zip(vectors, expected).enumerated() {
            #expect(vector.count == 384)
            let cosine = MiniLMFixtures.cosine(vector, reference)
            worst = min(worst, cosine)
            #expect(cosine >= 0.9999, "text \(index) (\(texts[index].prefix(60).debugDescription)): cosine \(cosine)")
        }
        print("minilm vs NumPy reference: worst cosine \(worst) over \(texts.count) texts")
    }

    @Test func batchingDoesNotChangeAVector() async throws {
        let embedder = try MiniLMFixtures.loadEmbedder()
        let texts = (0..<40).map { "Sentence number \($0) about compressing files with gzip and xz." } + ["short"]
        let together = try await embedder.embed(texts)
        let alone = try await embedder.embed([texts[7]])
        #expect(MiniLMFixtures.cosine(together[7], alone[0]) > 0.99999)
        #expect(try await embedder.embed([]).isEmpty)
    }

    @Test func similarTextsScoreHigher() async throws {
        let embedder = try MiniLMFixtures.loadEmbedder()
        let vectors = try await embedder.embed([
            "How do I compress a file?", "Use gzip or xz to make a file smaller.", "The cat sat on the mat.",
        ])
        #expect(MiniLMFixtures.cosine(vectors[0], vectors[1]) > MiniLMFixtures.cosine(vectors[0], vectors[2]) + 0.2)
        for vector in vectors {
            #expect(abs(vector.reduce(0) { $0 + $1 * $1 } - 1) < 1e-4)
        }
    }

    @Test func identityLimitsAndCounter() throws {
        let embedder = try MiniLMFixtures.loadEmbedder()
        #expect(embedder.identity.description == "minilm/all-MiniLM-L6-v2@384")
        #expect(embedder.limits.maxTokensPerInput == 254)
        #expect(embedder.tokenCounter.count("Hello, world!") == 4)
    }

    @Test func embedsOffTheCooperativePool() async throws {
        let embedder = try MiniLMFixtures.loadEmbedder()
        // The forward pass runs on the embedder's executor threads: a heartbeat on the cooperative pool
        // (two threads here) keeps ticking while a long batch is embedded. Had the batch blocked the
        // pool, the heartbeat could only finish after it.
        let texts = Array(repeating: String(repeating: "blocking work on dedicated threads ", count: 40), count: 64)
        let start = ContinuousClock.now
        async let vectors = embedder.embed(texts)
        for _ in 0..<5 { try await Task.sleep(for: .milliseconds(10)) }
        let heartbeat = ContinuousClock.now - start
        #expect(try await vectors.count == 64)
        let total = ContinuousClock.now - start
        // Informational, as in the pipeline's test of the same property: in the full suite other tests
        // keep the 2-thread pool busy, and a loaded machine delays a 10 ms sleep by far more.
        print("MiniLM heartbeat: 5 ticks of 10 ms took \(heartbeat); the batch took \(total)")
    }

    @Test func refusesAnUnsupportedModelFolder() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("minilm-bad-\(UUID().uuidString)")
        try FileManager.default.createDirectory(
            at: folder.appendingPathComponent("1_Pooling"),
            withIntermediateDirectories: true
        )
        defer { try? FileManager.default.removeItem(at: folder) }
        // Missing files: a configuration error naming the file and the way out.
        let missing = #expect(throws: SluiceError.self) { try MiniLMEmbedder(directory: folder) }
        #expect(missing?.code == .configuration)
        #expect(missing?.message.contains("config.json") == true)
        // A different architecture: refused, naming the setting.
        for name in ["config.json", "sentence_bert_config.json", "1_Pooling/config.json", "vocab.txt"] {
            try FileManager.default.copyItem(
                at: MiniLMFixtures.modelDirectory.appendingPathComponent(name),
                to: folder.appendingPathComponent(name)
            )
        }
        let config = folder.appendingPathComponent("config.json")
        var object = try #require(JSONSerialization.jsonObject(with: Data(contentsOf: config)) as? [String: Any])
        object["num_hidden_layers"] = 12
        try JSONSerialization.data(withJSONObject: object).write(to: config)
        let wrongShape = #expect(throws: SluiceError.self) { try MiniLMEmbedder(directory: folder) }
        #expect(wrongShape?.code == .configuration)
        #expect(wrongShape?.message.contains("num_hidden_layers") == true)
        // A truncated weights file: refused, not a crash.
        object["num_hidden_layers"] = 6
        try JSONSerialization.data(withJSONObject: object).write(to: config)
        try Data([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]).write(to: folder.appendingPathComponent("model.safetensors"))
        let truncated = #expect(throws: SluiceError.self) { try MiniLMEmbedder(directory: folder) }
        #expect(truncated?.code == .configuration)
    }

    @Test func defaultDirectoryHonoursTheEnvironment() {
        #expect(MiniLMEmbedder.defaultDirectory(environment: ["SLUICE_MODEL_DIR": "/m"]).path == "/m")
        #expect(
            MiniLMEmbedder.defaultDirectory(environment: ["SLUICE_CACHE_DIR": "/c"]).path
                == "/c/models/all-MiniLM-L6-v2"
        )
    }

    @Test(arguments: [1, 2, 7, 8, 40, 100, 1000])
    func splitCoversEveryTextOnce(count: Int) {
        let texts = (0..<count).map { String(repeating: "x", count: 100 + ($0 * 7919) % 5000) }
        let ranges = MiniLMEmbedder.split(texts, into: 2)
        #expect(ranges.first?.lowerBound == 0 && ranges.last?.upperBound == count)
        #expect(zip(ranges, ranges.dropFirst()).allSatisfy { $0.upperBound == $1.lowerBound })
        #expect(ranges.count <= 2 && ranges.allSatisfy { !$0.isEmpty })
    }
}
