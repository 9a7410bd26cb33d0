import Foundation
import SluiceCore
import SluiceHTTP
import SluiceTesting
import Testing

@testable import SluiceSinks

/// Qdrant's collection names are 1 to 255 characters without `<>:"/\|?*`, NUL or U+001F (its validation, as
/// its maintainers state it: qdrant/qdrant#6073). The stand-in refuses others as Qdrant does, and the sink
/// refuses them before it asks, naming the setting: a generation's `<collection>_gN` and the alias
/// `<collection>_active` add to the configured name.
@Suite struct QdrantCollectionNameTests {
    static let identity = EmbedderIdentity(provider: "test", model: "m", dimensions: 4)

    @Test("a name past 255 characters or with a forbidden character is refused by the stand-in and by the sink")
    func limits() async throws {
        let server = try await StandInServer.launch(script: "qdrant_standin.py", arguments: ["--api-key", "q-key"])
        defer { server.stop() }
        let raw = try await HTTPClient.shared.send(
            HTTPRequest(
                method: "PUT",
                url: server.baseURL + "/collections/" + String(repeating: "q", count: 256),
                headers: [("api-key", "q-key"), ("Content-Type", "application/json")],
                body: Array(#"{"vectors": {"size": 4, "distance": "Cosine"}}"#.utf8)
            )
        )
        #expect(raw.status == 422, "the stand-in refuses 256 characters as Qdrant does (a validation error)")

        for name in [String(repeating: "q", count: 256), "a:b", "a*b"] {
            var settings = QdrantSink.Settings(url: server.baseURL, apiKey: "q-key")
            settings.collection = name
            let sink = QdrantSink(settings: settings)
            let error = await #expect(throws: SluiceError.self) { try await sink.prepare(embedder: Self.identity) }
            #expect(error?.code == .configuration && error?.message.contains("sink.collection") == true, "\(name)")
        }
        var settings = QdrantSink.Settings(url: server.baseURL, apiKey: "q-key")
        settings.collection = String(repeating: "q", count: 255)
        try await QdrantSink(settings: settings).prepare(embedder: Self.identity)
    }
}
