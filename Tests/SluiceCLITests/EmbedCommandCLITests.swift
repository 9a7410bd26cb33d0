import Foundation
import Testing

/// `sluice embed` through the built binary: JSON lines in, vectors out in the same order, bad lines refused.
@Suite struct EmbedCommandCLITests {
    @Test func embedsJSONLinesInOrder() async throws {
        let workspace = try Workspace("embed")
        defer { workspace.cleanUp() }
        let input = workspace.root.appendingPathComponent("in.jsonl")
        let output = workspace.root.appendingPathComponent("out.jsonl")
        let texts = [
            "How do I compress a file?", "", "Use gzip or xz to make a file smaller.", "The cat sat on the mat.",
        ]
        let lines = try texts.map {
            String(decoding: try JSONSerialization.data(withJSONObject: ["text": $0]), as: UTF8.self)
        }
        try (lines.joined(separator: "\n") + "\n").write(to: input, atomically: true, encoding: .utf8)
        for provider in ["minilm", "hash"] {
            let result = try await workspace.sluice([
                "embed", "--provider", provider, "--input", input.path, "--output", output.path,
            ])
            #expect(result.exitCode == 0, "\(result)")
            let vectors = try String(contentsOf: output, encoding: .utf8).split(separator: "\n").map { line in
                try #require(
                    (JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["embedding"] as? [Double]
                )
            }
            #expect(vectors.count == texts.count)
            #expect(vectors.allSatisfy { $0.count == 384 })
            func cosine(_ a: [Double], _ b: [Double]) -> Double { zip(a, b).reduce(0) { $0 + $1.0 * $1.1 } }
            if provider == "minilm" {
                // Same order: the compression question is closest to the gzip answer.
                #expect(cosine(vectors[0], vectors[2]) > cosine(vectors[0], vectors[3]) + 0.2)
            }
        }
    }

    /// The fp32 kernels' narrower copies (`SLUICE_MINILM_VECTOR_WIDTH`, which benchmarks use to run an
    /// AVX-512 machine as an AVX2 one) compute the same vectors as the widest, to the last bits' rounding.
    @Test(arguments: ["avx2", "baseline"])
    func narrowerKernelsGiveTheSameVectors(width: String) async throws {
        let workspace = try Workspace("embed-width")
        defer { workspace.cleanUp() }
        let input = workspace.root.appendingPathComponent("in.jsonl")
        let texts = [
            "How do I compress a file?", "Use gzip or xz to make a file smaller.",
            String(repeating: "A longer text, over many word pieces, past one vector of sixteen lanes. ", count: 12),
        ]
        let lines = try texts.map {
            String(decoding: try JSONSerialization.data(withJSONObject: ["text": $0]), as: UTF8.self)
        }
        try (lines.joined(separator: "\n") + "\n").write(to: input, atomically: true, encoding: .utf8)
        func vectors(precision: String, width: String?) async throws -> [[Double]] {
            let output = workspace.root.appendingPathComponent("out-\(precision)-\(width ?? "native").jsonl")
            let result = try await workspace.sluice(
                ["embed", "--precision", precision, "--input", input.path, "--output", output.path],
                environment: ["SLUICE_MINILM_VECTOR_WIDTH": width]
            )
            #expect(result.exitCode == 0, "\(result)")
            return try String(contentsOf: output, encoding: .utf8).split(separator: "\n").map { line in
                try #require(
                    (JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["embedding"] as? [Double]
                )
            }
        }
        func cosine(_ a: [Double], _ b: [Double]) -> Double { zip(a, b).reduce(0) { $0 + $1.0 * $1.1 } }
        // int8 re-quantizes each layer's activations, so last-bit differences can move a step: a looser bound.
        for (precision, bound) in [("fp32", 0.99999), ("int8", 0.998)] {
            let native = try await vectors(precision: precision, width: nil)
            let narrow = try await vectors(precision: precision, width: width)
            #expect(native.count == texts.count && narrow.count == texts.count)
            for (a, b) in zip(native, narrow) { #expect(cosine(a, b) > bound, "\(precision) at \(width)") }
        }
    }

    @Test(arguments: ["not json", "{\"txt\": \"x\"}", "[1, 2]", "{\"text\": 5}"])
    func refusesABadLineNamingIt(line: String) async throws {
        let workspace = try Workspace("embed-bad")
        defer { workspace.cleanUp() }
        let input = workspace.root.appendingPathComponent("in.jsonl")
        try "{\"text\": \"fine\"}\n\(line)\n".write(to: input, atomically: true, encoding: .utf8)
        let result = try await workspace.sluice(["embed", "--provider", "hash", "--input", input.path])
        #expect(result.exitCode == 1, "\(result)")
        #expect(result.stderr.contains("line 2"), "\(result)")
    }
}
