import Foundation
import SluiceCore
import SluiceTesting
import Testing

@testable import SluiceSinks

/// A filtered scan of the local store stops when its caller is cancelled (a request's deadline): three
/// 60,000-term filters past their 503 kept both cores busy for 90 s, starving every other search.
@Suite struct LocalSinkCancellationTests {
    static func filled(_ count: Int) async throws -> (LocalSink, URL) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "local-cancel-\(UInt64.random(in: 0...UInt64.max))"
        )
        let sink = try LocalSink(directory: folder)
        try await sink.prepare(embedder: EmbedderIdentity(provider: "test", model: "cancel", dimensions: 2))
        let records = (0..<count).map { index in
            VectorRecord(
                id: VectorID(rawValue: String(format: "%032x", index + 1)),
                documentKey: "doc\(index % 7).txt",
                ordinal: index,
                text: "water gate \(index)",
                vector: [1, Float(index % 13) + 0.5],
                metadata: ["page": .int(index)]
            )
        }
        try await sink.upsert(records)
        return (sink, folder)
    }

    @Test("a vector and a keyword scan stop with CancellationError once their flag is set")
    func scansCheckTheirFlag() async throws {
        let (sink, folder) = try await Self.filled(2_000)
        defer { TemporaryDirectory.remove(folder) }
        let never = SearchFilter.compare("page", .less, .int(-1))
        let cancelled = CancellationFlag()
        cancelled.cancel()
        #expect(throws: CancellationError.self) {
            try LocalSink.exactSearch(
                environment: sink.environment,
                [1, 1],
                k: 10,
                filter: never,
                cancellation: cancelled
            )
        }
        #expect(throws: CancellationError.self) {
            try LocalSink.keywordSearch(
                environment: sink.environment,
                "water gate",
                k: 10,
                filter: never,
                cancellation: cancelled
            )
        }
        // Not cancelled: the same scans answer (nothing matches the filter).
        let fresh = CancellationFlag()
        #expect(
            try LocalSink.exactSearch(environment: sink.environment, [1, 1], k: 10, filter: never, cancellation: fresh)
                .isEmpty
        )
        #expect(
            try LocalSink.keywordSearch(
                environment: sink.environment,
                "water gate",
                k: 10,
                filter: never,
                cancellation: fresh
            ).isEmpty
        )
    }
}
