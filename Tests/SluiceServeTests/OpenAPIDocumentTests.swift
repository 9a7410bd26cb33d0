import Foundation
import Testing

@testable import SluiceServe

/// docs/openapi.json is the one source of truth; the server serves the copy scripts/generate-openapi.sh
/// wrote into OpenAPIDocument.swift.
@Suite struct OpenAPIDocumentTests {
    static let committed = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("docs/openapi.json")

    @Test func theServedDocumentIsTheCommittedOne() throws {
        let text = try String(contentsOf: Self.committed, encoding: .utf8)
        #expect(OpenAPIDocument.json + "\n" == text, "docs/openapi.json changed: run scripts/generate-openapi.sh")
    }

    @Test func itIsOpenAPI31WithEveryRoute() throws {
        let object = try JSONSerialization.jsonObject(with: Data(OpenAPIDocument.json.utf8)) as? [String: Any]
        #expect(object?["openapi"] as? String == "3.1.0")
        let paths = Set((object?["paths"] as? [String: Any] ?? [:]).keys)
        for path in [
            "/health", "/ready", "/v1/search", "/v1/ask", "/v1/documents", "/v1/documents/{key}", "/v1/runs",
            "/v1/runs/{id}", "/metrics", "/openapi.json",
        ] {
            #expect(paths.contains(path), "\(path)")
        }
    }
}
