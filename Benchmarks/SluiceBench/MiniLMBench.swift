import ArgumentParser
import Foundation
import SluiceCore
import SluiceEmbed

/// `sluice-bench minilm`: throughput of the MiniLM embedder on a fixed set of texts, and the achieved
/// GFLOP/s against the measured sgemm peak, in either precision. `scripts/bench-minilm.sh` builds the text
/// set from /usr/share/doc and runs Sluice fp32 and int8, onnxruntime fp32 and int8, and OpenVINO on it.
struct MiniLMBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "minilm",
        abstract: "Throughput of the MiniLM embedder (texts/s, tokens/s, GFLOP/s vs sgemm peak)."
    )

    @Option(help: ArgumentHelp("JSON lines {\"text\": …} to embed.", valueName: "file")) var texts: String
    @Option(help: "Timed passes over the texts (the median is reported).") var repeats = 3
    @Option(help: "Worker threads (BLAS is single-threaded in each).") var threads = ProcessInfo.processInfo
        .activeProcessorCount
    @Option(help: "Texts per embedding call.") var batch = 64
    @Option(help: "The dense layers' arithmetic: fp32 or int8.") var precision = "fp32"
    @Option(help: ArgumentHelp("Also write the vectors of the last pass as JSON lines.", valueName: "file"))
    var vectors: String?

    func run() async throws {
        let lines = try String(contentsOfFile: texts, encoding: .utf8).split(separator: "\n")
        let inputs = try lines.map { line -> String in
            guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let text = object["text"] as? String
            else { throw ValidationError("\(texts): every line must be {\"text\": …}") }
            return text
        }
        guard let precision = MiniLMEmbedder.Precision(rawValue: precision) else {
            throw ValidationError("--precision: fp32 or int8")
        }
        let embedder = try MiniLMEmbedder(
            directory: MiniLMEmbedder.defaultDirectory(),
            threads: threads,
            precision: precision
        )
        let engine = precision == .fp32 ? "sluice" : "sluice-int8"
        if let kernel = embedder.int8Kernel { print("int8 kernel: \(kernel.rawValue)") }
        let lengths = embedder.sequenceLengths(inputs)
        let tokens = lengths.reduce(0, +)
        let flops = lengths.reduce(0.0) { $0 + MiniLMEmbedder.forwardFLOPs(tokens: $1) }
        let peak = MiniLMEmbedder.measureSGEMMPeak(threads: threads)
        print(
            "texts \(inputs.count), word pieces \(tokens) ([CLS]/[SEP] included), \(String(format: "%.1f", flops / 1e12)) TFLOP per pass"
        )
        print(
            "sgemm peak (\(threads) threads × 1 BLAS thread, 2048×384 · 384×1536): \(String(format: "%.1f", peak)) GFLOP/s"
        )
        _ = try await embedder.embed(Array(inputs.prefix(64)))
        var times: [Double] = []
        var last: [[Float]] = []
        for pass in 1...repeats {
            let start = ContinuousClock.now
            last = try await embedAll(inputs, embedder: embedder)
            let seconds = (ContinuousClock.now - start) / .seconds(1)
            times.append(seconds)
            print(
                String(
                    format: "pass %d: %.2f s, %.1f texts/s, %.0f tokens/s",
                    pass,
                    seconds,
                    Double(inputs.count) / seconds,
                    Double(tokens) / seconds
                )
            )
        }
        let median = times.sorted()[times.count / 2]
        print(
            String(
                format:
                    "sluice minilm \(precision.rawValue): median %.2f s  %.1f texts/s  %.0f tokens/s  %.1f GFLOP/s = %.0f%% of the sgemm peak",
                median,
                Double(inputs.count) / median,
                Double(tokens) / median,
                flops / median / 1e9,
                100 * flops / median / 1e9 / peak
            )
        )
        print("result \(engine) " + String(format: "%.2f", Double(inputs.count) / median))
        if let vectors {
            let text = last.map { "{\"embedding\":[" + $0.map { "\($0)" }.joined(separator: ",") + "]}\n" }.joined()
            try text.write(toFile: vectors, atomically: true, encoding: .utf8)
        }
    }

    /// Embeds in batches of `batch`, with as many calls in flight as there are threads (as the
    /// pipeline's embed stage does), keeping the order.
    private func embedAll(_ inputs: [String], embedder: MiniLMEmbedder) async throws -> [[Float]] {
        let batches = stride(from: 0, to: inputs.count, by: batch).map { $0..<min($0 + batch, inputs.count) }
        var results = [[[Float]]](repeating: [], count: batches.count)
        try await withThrowingTaskGroup(of: (Int, [[Float]]).self) { group in
            var next = 0
            func submit() {
                guard next < batches.count else { return }
                let index = next
                let slice = Array(inputs[batches[index]])
                group.addTask { (index, try await embedder.embed(slice)) }
                next += 1
            }
            for _ in 0..<max(1, threads) { submit() }
            for try await (index, vectors) in group {
                results[index] = vectors
                submit()
            }
        }
        return results.flatMap { $0 }
    }
}
