import ArgumentParser
import Foundation
import SluiceCore
import SluiceSinks
import SluiceTesting

/// Chroma: the sink beside the chromadb Python client's batch `add` and `upsert` of the same rows
/// (scripts/tools/chroma_bulk_reference.py).
extension SinkBench {
    func chroma(_ records: [VectorRecord], _ identity: EmbedderIdentity, _ work: URL) async throws -> [Pair] {
        let server = try await StandInServer.launch(
            script: "chroma_server.py",
            arguments: [work.appendingPathComponent("chroma").path]
        )
        defer { server.stop() }
        // The client reads the rows from a file before timing.
        let rows = work.appendingPathComponent("rows.jsonl")
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        var data = Data()
        for record in records {
            data += try encoder.encode(record)
            data.append(0x0A)
        }
        try data.write(to: rows)
        let venvPython = Self.cacheDirectory.appendingPathComponent("venv/bin/python").path
        let script = StandInServer.repositoryRoot.appendingPathComponent("scripts/tools/chroma_bulk_reference.py").path

        var pairs: [Pair] = []
        for repeatIndex in 0..<repeats {
            var settings = ChromaSink.Settings(url: server.baseURL, apiKey: nil)
            settings.collection = "bench_sluice_\(repeatIndex)"
            settings.batch = batch
            let sink = ChromaSink(settings: settings)
            try await sink.prepare(embedder: identity)
            var seconds = 0.0
            var output = ""
            try await Self.alternating(repeatIndex) {
                seconds = try await load(sink, records)
            } reference: {
                let methods = repeatIndex % 2 == 0 ? ["add", "upsert"] : ["upsert", "add"]
                output = try Self.execute(
                    venvPython,
                    [script, String(server.port), "bench_ref_\(repeatIndex)", rows.path] + methods,
                    [:]
                )
            }
            try Self.check(try await sink.count(), records.count, "chroma")
            for method in ["add", "upsert"] {
                // METHOD <method> SECONDS <s> BATCH <n>
                guard let line = output.split(separator: "\n").first(where: { $0.hasPrefix("METHOD \(method) ") }),
                    case let fields = line.split(separator: " "), fields.count == 6, let refSeconds = Double(fields[3])
                else { throw ValidationError("chroma reference printed no time for \(method): \(output)") }
                let pair = Pair(
                    store: "chroma",
                    reference: "chromadb \(method) ×\(fields[5])",
                    rows: records.count,
                    sluice: seconds,
                    referenceSeconds: refSeconds
                )
                Self.row(pair)
                pairs.append(pair)
            }
            // Each repeat starts from an empty server.
            for name in [settings.collection, "bench_ref_\(repeatIndex)_add", "bench_ref_\(repeatIndex)_upsert"] {
                var drop = settings
                drop.collection = name
                try await ChromaSink(settings: drop).drop()
            }
        }
        return pairs
    }
}
