import Foundation
import SluiceCore
import SluiceHTTP
import SluiceTesting
import Testing

@testable import SluiceSinks

/// Chroma's rule for a collection's name (its server's validation, 1.5.9: "3-512 characters from
/// [a-zA-Z0-9._-], starting and ending with a character in [a-zA-Z0-9]", no `..`, not an IPv4 address): the
/// sink refuses a name that breaks it before any request, as a configuration error naming `sink.collection`,
/// and the real server refuses the same names (and takes the others). A generation's `<collection>_gN` and
/// the records' `<collection>_generations` add to the configured name.
@Suite(.serialized)
struct ChromaCollectionNameTests {
    static let identity = EmbedderIdentity(provider: "test", model: "m", dimensions: 4)

    static let refused = [
        "ab", String(repeating: "c", count: 513), "-abc", "abc-", "_abc", "abc.", "a..b", "a b", "a/b", "aéb",
        "1.2.3.4", "255.255.255.255", "0.0.0.0",
    ]
    static let accepted = [
        "abc", String(repeating: "c", count: 512), "a.b", "a_-.b", "docs_g2", "1.2.3", "1.2.3.4a", "256.1.1.1",
        "01.2.3.4", "ABC",
    ]

    /// A sink of `collection` at `url`.
    static func sink(_ collection: String, url: String = "http://127.0.0.1:9") -> ChromaSink {
        var settings = ChromaSink.Settings(url: url, apiKey: nil)
        settings.collection = collection
        return ChromaSink(settings: settings)
    }

    @Test("a name that breaks Chroma's rule is a configuration error naming sink.collection, before any request")
    func refusedBeforeAnyRequest() async throws {
        // Nothing listens at the URL: a request would fail as a network error, not as the configuration.
        for name in Self.refused {
            let error = await #expect(throws: SluiceError.self) {
                try await Self.sink(name).prepare(embedder: Self.identity)
            }
            #expect(error?.code == .configuration, "\(name): \(String(describing: error))")
            #expect(error?.message.contains("sink.collection") == true, "\(name): \(String(describing: error))")
            let configuration = try PipelineConfiguration.load(
                file: nil,
                overrides: ["sink.kind=chroma", "sink.collection=\(name)"]
            )
            let made = #expect(throws: SluiceError.self) { try SinkFactory.make(configuration, readOnly: true) }
            #expect(made?.code == .configuration && made?.message.contains("sink.collection") == true, "\(name)")
        }
        for name in Self.accepted {
            let configuration = try PipelineConfiguration.load(
                file: nil,
                overrides: ["sink.kind=chroma", "sink.collection=\(name)"]
            )
            _ = try SinkFactory.make(configuration, readOnly: true)
        }
    }

    @Test("the real Chroma server refuses the names the sink refuses, and takes the ones it takes")
    func theServerAgrees() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "sluice-chroma-names-\(UInt32.random(in: 0...UInt32.max))"
        )
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { TemporaryDirectory.remove(folder) }
        let server = try await StandInServer.launch(script: "chroma_server.py", arguments: [folder.path])
        defer { server.stop() }
        let path = "/api/v2/tenants/default_tenant/databases/default_database/collections"
        for (names, status) in [(Self.refused, 400), (Self.accepted, 200)] {
            for name in names {
                let body = try JSONSerialization.data(withJSONObject: ["name": name])
                let answer = try await HTTPClient.shared.send(
                    HTTPRequest(
                        method: "POST",
                        url: server.baseURL + path,
                        headers: [("Content-Type", "application/json")],
                        body: Array(body)
                    )
                )
                #expect(answer.status == status, "\(name.prefix(40)) (\(name.count)): \(answer.bodyText.prefix(300))")
            }
        }
        // The sink takes an accepted name at the server, and keeps a generation's records beside it.
        let sink = Self.sink("a.b-c_d", url: server.baseURL)
        try await sink.prepare(embedder: Self.identity)
        #expect(try await sink.writeSharedRecord("manifest", Data("m".utf8), expecting: 0))
        // A name whose records' collection (`_generations` added) would break the rule is refused before it asks.
        let long = Self.sink(String(repeating: "c", count: 505), url: server.baseURL)
        let error = await #expect(throws: SluiceError.self) {
            try await long.writeSharedRecord("manifest", Data("m".utf8), expecting: 0)
        }
        #expect(
            error?.code == .configuration && error?.message.contains("sink.collection") == true,
            "\(String(describing: error))"
        )
    }
}
