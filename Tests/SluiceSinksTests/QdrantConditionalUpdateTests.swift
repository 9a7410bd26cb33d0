import Foundation
import SluiceCore
import SluiceSinks
import SluiceTesting
import Testing

/// Sharded generations on Qdrant rest on `update_filter` (Qdrant 1.16): an older server would ignore the field
/// and overwrite the manifest's next version, so two racing changes could both win. Such a server is refused.
@Suite struct QdrantConditionalUpdateTests {
    static func sink(_ server: StandInServer) -> QdrantSink {
        var settings = QdrantSink.Settings(url: server.baseURL, apiKey: nil)
        settings.collection = "docs"
        return QdrantSink(settings: settings)
    }

    @Test("a Qdrant older than 1.16: the manifest is not written, the error names the version")
    func olderServerIsRefused() async throws {
        let server = try await StandInServer.launch(
            script: "qdrant_standin.py",
            arguments: ["--server-version", "1.15.4"]
        )
        defer { server.stop() }
        do {
            _ = try await Self.sink(server).writeSharedRecord("manifest", Data("{}".utf8), expecting: 0)
            Issue.record("a write on Qdrant 1.15.4 was made")
        } catch let error as SluiceError {
            #expect(error.code == .configuration, "\(error)")
            #expect(error.message.contains("1.15.4") && error.message.contains("1.16"), "\(error)")
        }
        #expect(try await Self.sink(server).sharedRecord("manifest") == nil, "nothing was written")
    }

    @Test("Qdrant 1.16: the manifest's next version is written once, a second write expecting the same loses")
    func currentServerWritesOnce() async throws {
        let server = try await StandInServer.launch(script: "qdrant_standin.py")
        defer { server.stop() }
        let sink = Self.sink(server)
        #expect(try await sink.writeSharedRecord("manifest", Data("{\"a\":1}".utf8), expecting: 0))
        #expect(try await !sink.writeSharedRecord("manifest", Data("{\"a\":2}".utf8), expecting: 0))
        #expect(try await sink.sharedRecord("manifest")?.value == Data("{\"a\":1}".utf8))
    }
}
