import Foundation
import SluiceCore
import SluiceTesting
import Testing

@testable import SluiceSinks

/// The registry of store kinds: each built-in store is described once, an unknown name is a
/// configuration error that lists the known ones, and each store checks its own settings.
@Suite struct SinkFactoryTests {
    static func configuration(_ overrides: [String]) throws -> PipelineConfiguration {
        try PipelineConfiguration.load(file: nil, overrides: overrides)
    }

    @Test func everyStoreSluiceShipsIsRegistered() {
        let shipped: [PipelineConfiguration.Sink.Kind] = [
            .local, .jsonl, .pgvector, .chroma, .qdrant, .pinecone, .openAIVectorStore,
        ]
        for kind in shipped {
            #expect(SinkFactory.descriptor(for: kind) != nil, "\(kind)")
        }
        #expect(Set(SinkDescriptor.standard.map(\.kind)) == Set(shipped))
    }

    @Test func anUnknownKindIsAConfigurationErrorListingTheKnownOnes() throws {
        // Any name decodes (the set is open); building it is what fails.
        let configuration = try Self.configuration(["sink.kind=nosuch"])
        #expect(configuration.sink.kind == PipelineConfiguration.Sink.Kind("nosuch"))
        let error = try #require(throws: SluiceError.self) { try SinkFactory.make(configuration, readOnly: true) }
        #expect(error.code == .configuration)
        #expect(error.message.contains("'nosuch'") && error.message.contains("pgvector"), "\(error.message)")
    }

    @Test func anEmptyKindIsRefusedWhileDecoding() {
        #expect(throws: SluiceError.self) { try Self.configuration(["sink.kind=''"]) }
    }

    @Test(arguments: [
        (["sink.kind=pgvector", "sink.url=mysql://127.0.0.1/x"], "postgresql://"),
        (["sink.kind=qdrant", "sink.url=ftp://h"], "http://"),
        (["sink.kind=chroma", "sink.url=http://"], "http://"),
        (["sink.kind=pinecone", "sink.url=http://h:99999", "sink.index=i"], "http://"),
    ])
    func eachStoreChecksItsURL(overrides: [String], expected: String) throws {
        let configuration = try Self.configuration(overrides)
        let error = try #require(throws: SluiceError.self) { try SinkFactory.make(configuration, readOnly: true) }
        #expect(error.code == .configuration)
        #expect(error.message.contains("sink.url") && error.message.contains(expected), "\(error.message)")
    }

    /// A URL meant for an HTTP store is no business of the local store.
    @Test func aURLIsCheckedOnlyByTheStoresThatReadIt() throws {
        let configuration = try Self.configuration(["sink.kind=jsonl", "sink.url=not a url", "sink.path=/tmp/x.jsonl"])
        #expect(throws: Never.self) { try SinkFactory.descriptor(of: configuration).validate(configuration.sink) }
    }

    @Test func keysTheChosenStoreDoesNotReadAreNamed() throws {
        let qdrant = try Self.configuration(["sink.kind=qdrant", "sink.table=t", "sink.hnsw.m=8", "sink.batch=10"])
        #expect(SinkFactory.unreadKeys(qdrant) == ["sink.hnsw", "sink.table"])
        let pgvector = try Self.configuration(["sink.kind=pgvector", "sink.table=t", "sink.metric=dot"])
        #expect(SinkFactory.unreadKeys(pgvector).isEmpty)
        #expect(SinkFactory.unreadKeys(try Self.configuration([])).isEmpty)
    }

    /// A reader that starts before the first run (serve on a new deployment) finds the local store, created
    /// empty by its descriptor; a store that exists apart from Sluice is left alone.
    @Test func theLocalStoreIsCreatedEmptyForAReaderBeforeTheFirstRun() async throws {
        let root = try TemporaryDirectory.make("sink-factory")
        defer { TemporaryDirectory.remove(root) }
        var configuration = PipelineConfiguration()
        configuration.baseDirectory = root
        #expect(throws: SluiceError.self) { try SinkFactory.make(configuration, readOnly: true) }
        try SinkFactory.createIfMissing(configuration)
        #expect(try await SinkFactory.make(configuration, readOnly: true).count() == 0)
        #expect(SinkFactory.descriptor(for: .qdrant)?.createIfMissing == nil)
    }
}
