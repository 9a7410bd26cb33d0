import Foundation
import SluiceCore
import SluiceHTTP
import SluiceTesting
import Testing

@testable import SluiceSinks

/// Pinecone's identifier limits (docs.pinecone.io, "Identifier limits"): an index's name is 1 to 45
/// characters of `a-z`, `0-9` and `-`, not starting or ending with `-`; a namespace is at most 512 characters
/// of ASCII except NUL (`""` the default). The sink refuses others before any request, as a configuration
/// error naming `sink.index` or `sink.namespace` (a generation's `<namespace>_gN` adds to the configured
/// name), and the stand-in refuses them as the service does.
@Suite struct PineconeNameTests {
    static let identity = EmbedderIdentity(provider: "test", model: "m", dimensions: 4)

    static let refusedIndexes = ["", "Docs", "-docs", "docs-", "do_cs", "do.cs", String(repeating: "d", count: 46)]
    static let acceptedIndexes = ["docs", "docs-1", "1docs", String(repeating: "d", count: 45)]
    static let refusedNamespaces = [String(repeating: "n", count: 513), "naïve", "a\u{0}b"]
    static let acceptedNamespaces = ["", "docs", "a b/c:d", String(repeating: "n", count: 512)]

    /// A sink of `index` and `namespace` at `url`.
    static func sink(index: String, namespace: String, url: String = "http://127.0.0.1:9") -> PineconeSink {
        var settings = PineconeSink.Settings(apiKey: "p-key", index: index)
        settings.controlURL = url
        settings.namespace = namespace
        return PineconeSink(settings: settings)
    }

    @Test("a name past Pinecone's limits is a configuration error naming its key, before any request")
    func refusedBeforeAnyRequest() async throws {
        // Nothing listens at the URL: a request would fail as a network error, not as the configuration.
        let cases =
            Self.refusedIndexes.map { (index: $0, namespace: "docs", key: "sink.index") }
            + Self.refusedNamespaces.map { (index: "docs", namespace: $0, key: "sink.namespace") }
        for (index, namespace, key) in cases {
            let sink = Self.sink(index: index, namespace: namespace)
            let error = await #expect(throws: SluiceError.self) { try await sink.prepare(embedder: Self.identity) }
            #expect(
                error?.code == .configuration && error?.message.contains(key) == true,
                "\(String(describing: error))"
            )
            var section = PipelineConfiguration.Sink()
            section.kind = .pinecone
            section.index = index
            section.namespace = namespace
            let checked = #expect(throws: SluiceError.self) { try SinkDescriptor.pinecone.validate(section) }
            #expect(checked?.code == .configuration && checked?.message.contains(key) == true, "\(key) \(index)")
        }
        for index in Self.acceptedIndexes {
            for namespace in Self.acceptedNamespaces {
                var section = PipelineConfiguration.Sink()
                section.kind = .pinecone
                section.index = index
                section.namespace = namespace
                try SinkDescriptor.pinecone.validate(section)
            }
        }
    }

    @Test("the stand-in refuses the names the sink refuses, as Pinecone does, and takes the others")
    func theStandInAgrees() async throws {
        let server = try await StandInServer.launch(script: "pinecone_standin.py", arguments: ["--api-key", "p-key"])
        defer { server.stop() }
        let headers = [
            ("Api-Key", "p-key"), ("X-Pinecone-Api-Version", "2025-04"), ("Content-Type", "application/json"),
        ]
        func post(_ path: String, _ body: [String: Any]) async throws -> HTTPResponse {
            try await HTTPClient.shared.send(
                HTTPRequest(
                    method: "POST",
                    url: server.baseURL + path,
                    headers: headers,
                    body: Array(try JSONSerialization.data(withJSONObject: body))
                )
            )
        }
        for (names, status) in [(Self.refusedIndexes, 400), (Self.acceptedIndexes, 201)] {
            for name in names {
                let answer = try await post(
                    "/indexes",
                    ["name": name, "dimension": 4, "metric": "cosine", "spec": ["serverless": [:]]]
                )
                #expect(answer.status == status, "\(name): \(answer.bodyText.prefix(200))")
            }
        }
        for (names, status) in [(Self.refusedNamespaces, 400), (Self.acceptedNamespaces, 200)] {
            for namespace in names {
                let answer = try await post(
                    "/index/docs/vectors/upsert",
                    ["namespace": namespace, "vectors": [["id": "a", "values": [1, 0, 0, 0]]]]
                )
                #expect(answer.status == status, "\(namespace.prefix(20)): \(answer.bodyText.prefix(200))")
            }
        }
    }
}
