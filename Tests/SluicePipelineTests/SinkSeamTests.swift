import Foundation
import Logging
import SluiceChunk
import SluiceCore
import SluiceSinks
import SluiceTesting
import Synchronization
import Testing

@testable import SluicePipeline

/// Stores describe themselves: a kind registered from outside SluiceSinks is built from a pipeline file
/// and used by a run, and a store the pipeline knows nothing about (registered, or handed over in
/// ``PipelineComponents``) is checked for availability before a run as the built-in remote ones are.
@Suite struct SinkSeamTests {
    /// A store that cannot be reached: every call fails as a refused connection does, and is recorded.
    final class UnreachableSink: VectorSink {
        let calls = Mutex<[String]>([])
        var name: String { "unreachable:test" }

        private func fail(_ call: String) -> SluiceError {
            calls.withLock { $0.append(call) }
            return SluiceError(.sinkUnavailable, "connection refused")
        }

        func prepare(embedder: EmbedderIdentity) async throws { throw fail("prepare") }
        func upsert(_ records: [VectorRecord]) async throws { throw fail("upsert") }
        func delete(_ ids: [VectorID]) async throws { throw fail("delete") }
        func count() async throws -> Int { throw fail("count") }
        func search(_ vector: [Float], k: Int) async throws -> [SearchHit] { throw fail("search") }
        func exportAll(_ body: @Sendable (VectorRecord) throws -> Void) async throws { throw fail("export") }
        func removeAll() async throws { throw fail("removeAll") }
        func info() async throws -> SinkInfo { throw fail("info") }
    }

    static func components(_ configuration: PipelineConfiguration) throws -> PipelineComponents {
        try PipelineComponents.standard(configuration: configuration)
    }

    static var logger: Logger {
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        return logger
    }

    static func pipeline(_ harness: PipelineHarness, sink: any VectorSink) -> Pipeline {
        let components = PipelineComponents(
            extractors: harness.extractors,
            chunker: RecursiveChunker(maxTokens: 40, overlapTokens: 5, counter: harness.embedder.tokenCounter),
            embedder: harness.embedder,
            sink: sink
        )
        return Pipeline(configuration: harness.configuration, components: components, logger: Self.logger)
    }

    /// A sink a library user hands over is asked first whether it answers, and the run stops there with
    /// "dependency unavailable" (exit 6), having touched nothing: no prepare, no write.
    @Test func aCustomSinkIsCheckedBeforeTheRun() async throws {
        let harness = try PipelineHarness()
        defer { harness.cleanUp() }
        try TestCorpus.writeTextDocuments(count: 2, into: harness.source)
        let sink = UnreachableSink()
        let error = try await #require(throws: SluiceError.self) {
            try await Self.pipeline(harness, sink: sink).run()
        }
        #expect(error.code == .dependencyUnavailable, "\(error)")
        #expect(error.message.contains("unreachable:test cannot be reached"), "\(error.message)")
        #expect(sink.calls.withLock { $0 } == ["info"])
    }

    /// `sluice check` says the same of it.
    @Test func checkReportsACustomSinkUnavailable() async throws {
        let harness = try PipelineHarness()
        defer { harness.cleanUp() }
        let checks = await Self.pipeline(harness, sink: UnreachableSink()).check()
        let store = try #require(checks.first { $0.subject == "store" })
        #expect(store.outcome == .unavailable, "\(store)")
    }

    /// A store that works but says what it cannot do (``SinkInfo/warnings``, as pgvector without `unaccent`).
    final class WarningSink: VectorSink {
        var name: String { "warning:test" }
        func prepare(embedder: EmbedderIdentity) async throws {}
        func upsert(_ records: [VectorRecord]) async throws {}
        func delete(_ ids: [VectorID]) async throws {}
        func count() async throws -> Int { 0 }
        func search(_ vector: [Float], k: Int) async throws -> [SearchHit] { [] }
        func exportAll(_ body: @Sendable (VectorRecord) throws -> Void) async throws {}
        func removeAll() async throws {}
        func info() async throws -> SinkInfo {
            SinkInfo(name: name, count: 0, warnings: ["keyword search does not fold accents"])
        }
    }

    /// `sluice check` reports a store's warnings as a warning (exit 0), not as `ok`.
    @Test func checkReportsAStoreWarning() async throws {
        let harness = try PipelineHarness()
        defer { harness.cleanUp() }
        let checks = await Self.pipeline(harness, sink: WarningSink()).check()
        let store = try #require(checks.first { $0.subject == "store" })
        #expect(store.outcome == .warning, "\(store)")
        #expect(store.detail.contains("keyword search does not fold accents"), "\(store)")
    }

    /// A store kind registered from outside SluiceSinks: `sink.kind` names it, the standard components
    /// build it, and a run checks it and writes to it. No list of kinds was edited.
    @Test func aKindRegisteredFromOutsideIsBuiltCheckedAndUsed() async throws {
        let harness = try PipelineHarness()
        defer { harness.cleanUp() }
        try TestCorpus.writeTextDocuments(count: 3, into: harness.source)
        let kind = PipelineConfiguration.Sink.Kind("test-memory-\(UUID().uuidString.prefix(8))")
        let store = InMemorySink()
        let built = Mutex(0)
        SinkFactory.register(
            SinkDescriptor(kind: kind, keys: ["collection"]) { _, _ in
                built.withLock { $0 += 1 }
                return store
            }
        )
        let configuration = try PipelineConfiguration.load(
            file: nil,
            overrides: [
                "sink.kind=\(kind)", "sink.collection=mine", "source.path=\(harness.source.path)",
                "state=\(harness.root.appendingPathComponent("state").path)",
            ]
        )
        #expect(SinkFactory.unreadKeys(configuration).isEmpty)
        var components = try Self.components(configuration)
        #expect(built.withLock { $0 } == 1)
        components.extractors = harness.extractors
        let stats = try await Pipeline(configuration: configuration, components: components, logger: Self.logger).run()
        #expect(stats.documentsFailed == 0)
        #expect(Set(store.records.map(\.documentKey)).count == 3)
    }

    /// A registered kind that cannot be reached stops the run before any document, as pgvector would.
    @Test func aRegisteredKindThatCannotBeReachedStopsTheRun() async throws {
        let harness = try PipelineHarness()
        defer { harness.cleanUp() }
        try TestCorpus.writeTextDocuments(count: 1, into: harness.source)
        let kind = PipelineConfiguration.Sink.Kind("test-down-\(UUID().uuidString.prefix(8))")
        let sink = UnreachableSink()
        SinkFactory.register(SinkDescriptor(kind: kind, keys: []) { _, _ in sink })
        var configuration = harness.configuration
        configuration.sink.kind = kind
        var components = try Self.components(configuration)
        components.extractors = harness.extractors
        let error = try await #require(throws: SluiceError.self) {
            try await Pipeline(configuration: configuration, components: components, logger: Self.logger).run()
        }
        #expect(error.code == .dependencyUnavailable)
        #expect(sink.calls.withLock { $0 } == ["info"])
    }

    /// The stores in local files have nothing to check, and say so themselves.
    @Test func localStoresAreNotRemote() throws {
        let root = try TemporaryDirectory.make("sink-seam")
        defer { TemporaryDirectory.remove(root) }
        var configuration = PipelineConfiguration()
        configuration.baseDirectory = root
        #expect(try SinkFactory.make(configuration, readOnly: false).isRemote == false)
        configuration.sink.kind = .jsonl
        configuration.sink.path = "out.jsonl"
        #expect(try SinkFactory.make(configuration, readOnly: false).isRemote == false)
        #expect(UnreachableSink().isRemote)
    }
}
