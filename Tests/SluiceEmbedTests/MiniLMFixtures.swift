import Foundation
import SluiceCore
import Testing

@testable import SluiceEmbed

/// The model folder (filled by scripts/setup.sh) and the committed reference fixtures.
enum MiniLMFixtures {
    static let modelDirectory = MiniLMEmbedder.defaultDirectory()

    /// The shared embedder; loading maps the weights once for all tests.
    static let embedder: Result<MiniLMEmbedder, any Error> = Result {
        try MiniLMEmbedder(directory: modelDirectory, threads: 2)
    }

    /// The shared int8 embedder, with the fastest kernel this CPU runs.
    static let int8Embedder: Result<MiniLMEmbedder, any Error> = Result {
        try MiniLMEmbedder(directory: modelDirectory, threads: 2, precision: .int8, int8Kernel: nil, environment: [:])
    }

    static func loadEmbedder(_ precision: MiniLMEmbedder.Precision = .fp32) throws -> MiniLMEmbedder {
        do {
            return try (precision == .int8 ? int8Embedder : embedder).get()
        } catch {
            Issue.record("the minilm model is not usable in \(modelDirectory.path) (run scripts/setup.sh): \(error)")
            throw error
        }
    }

    static func fixture(_ name: String) -> URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/\(name)")
    }

    /// The JSON objects of a JSON-lines fixture.
    static func lines(_ name: String) throws -> [[String: Any]] {
        let text = try String(contentsOf: fixture(name), encoding: .utf8)
        return try text.split(separator: "\n").map { line in
            try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        }
    }

    static func cosine(_ a: [Float], _ b: [Float]) -> Double {
        var dot = 0.0
        var na = 0.0
        var nb = 0.0
        for (x, y) in zip(a, b) {
            dot += Double(x) * Double(y)
            na += Double(x) * Double(x)
            nb += Double(y) * Double(y)
        }
        return dot / (na.squareRoot() * nb.squareRoot())
    }
}
