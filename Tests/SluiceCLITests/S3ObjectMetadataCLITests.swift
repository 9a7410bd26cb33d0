import Foundation
import SluiceCore
import SluiceHTTP
import SluiceTesting
import Testing

/// S3 objects' user metadata (`x-amz-meta-*`) and tags as typed metadata (issue 34), and so as readers
/// (`access`, issue 36), against moto's server: `source.s3.metadata_from_object` and `metadata_from_tags`
/// map them to record keys; tags cost one GetObjectTagging per object downloaded and none for an unchanged
/// one (change detection stays listing-only).
@Suite(.serialized)
struct S3ObjectMetadataCLITests {
    static func pipeline(port: Int) -> String {
        S3SourceCLITests.pipeline(port: port).replacingOccurrences(
            of: "    secret_key_env: SLUICE_TEST_S3_SECRET\n",
            with: """
                    secret_key_env: SLUICE_TEST_S3_SECRET
                    metadata_from_object: {team: team, year: year}
                    metadata_from_tags: {access: readers, stage: stage}

                """
        ) + """
            access:
              enabled: true
              default: deny

            """
    }

    /// PUTs `key` with user metadata and tags.
    static func put(
        _ bucket: S3SourceCLITests.Bucket,
        _ key: String,
        _ text: String,
        metadata: [String: String] = [:],
        tags: [String: String] = [:]
    ) async throws {
        var query = URLComponents()
        query.queryItems =
            metadata.sorted { $0.key < $1.key }.map { URLQueryItem(name: "meta-" + $0.key, value: $0.value) }
            + tags.sorted { $0.key < $1.key }.map { URLQueryItem(name: "tag-" + $0.key, value: $0.value) }
        let url = bucket.server.baseURL + "/_standin/object/" + key + "?" + (query.percentEncodedQuery ?? "")
        let answer = try await HTTPClient.shared.send(HTTPRequest(method: "PUT", url: url, body: Array(text.utf8)))
        #expect(answer.status == 200, "PUT \(key): \(answer.bodyText)")
    }

    /// GET object and GetObjectTagging requests so far.
    static func requests(_ bucket: S3SourceCLITests.Bucket) async throws -> (get: Int, tagging: Int) {
        let answer = try await HTTPClient.shared.send(HTTPRequest(url: bucket.server.baseURL + "/_standin/stats"))
        let object = try JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: Int] ?? [:]
        return (object["get"] ?? -1, object["tagging"] ?? -1)
    }

    /// Each document's metadata (of its first record) by document key.
    static func metadata(_ ws: Workspace, _ target: Workspace.Target) async throws -> [String: [String: MetadataValue]]
    {
        let process = try ws.start(
            ["export", ws.file("s3.yaml").path] + target.arguments,
            environment: S3SourceCLITests.environment
        )
        let result = try await process.wait(timeout: .seconds(60))
        #expect(result.exitCode == 0, "\(result)")
        var documents: [String: [String: MetadataValue]] = [:]
        for record in try Export.records(Data(result.stdout.utf8)) where documents[record.documentKey] == nil {
            documents[record.documentKey] = record.metadata
        }
        return documents
    }

    @Test(
        "user metadata and tags become typed metadata and readers; tags are read once per download, never for an unchanged object"
    )
    func metadataAndTags() async throws {
        let ws = try Workspace("s3-object-metadata")
        defer { ws.cleanUp() }
        let bucket = S3SourceCLITests.Bucket(
            server: try await StandInServer.launch(script: "s3_server.py", arguments: ["--bucket", "corpus"])
        )
        defer { bucket.server.stop() }
        try Self.pipeline(port: bucket.server.port).write(to: ws.file("s3.yaml"), atomically: true, encoding: .utf8)
        try await Self.put(
            bucket,
            "docs/hr/pay.txt",
            "Payroll runs on the last working day of the month.\n",
            metadata: ["team": "payroll"],
            tags: ["readers": "hr board", "stage": "final"]
        )
        try await Self.put(
            bucket,
            "docs/eng/design.md",
            "# Design\n\nThe sluice gates open by a hydraulic ram.\n",
            metadata: ["team": "platform", "year": "2026"],
            tags: ["readers": "eng"]
        )
        try await Self.put(bucket, "docs/open.txt", "Opening hours of the visitor centre.\n")
        let main = ws.target("main")

        // 1. A first load: the metadata typed (digits → an integer), the readers a list; tags read once per
        // object downloaded.
        let first = try await ws.sluice(
            ["run", ws.file("s3.yaml").path] + main.arguments + ["--quiet"],
            environment: S3SourceCLITests.environment,
            timeout: .seconds(240)
        )
        #expect(first.exitCode == 0, "\(first)")
        var documents = try await Self.metadata(ws, main)
        #expect(documents.keys.sorted() == ["eng/design.md", "hr/pay.txt", "open.txt"])
        #expect(documents["hr/pay.txt"]?["access"] == .strings(["hr", "board"]))
        #expect(documents["hr/pay.txt"]?["team"] == .string("payroll"))
        #expect(documents["hr/pay.txt"]?["stage"] == .string("final"))
        #expect(documents["eng/design.md"]?["access"] == .strings(["eng"]))
        #expect(documents["eng/design.md"]?["year"] == .int(2026))
        #expect(documents["open.txt"]?["access"] == nil, "no readers under access.default: deny")
        #expect(documents["open.txt"]?["team"] == nil)
        var requests = try await Self.requests(bucket)
        #expect(requests.get == 3 && requests.tagging == 3, "\(requests)")

        // 2. A no-op run: no GET, no GetObjectTagging, nothing written again.
        let before = requests
        let noop = try await ws.sluice(
            ["run", ws.file("s3.yaml").path] + main.arguments + ["--quiet", "--stats-json", ws.file("noop.json").path],
            environment: S3SourceCLITests.environment,
            timeout: .seconds(240)
        )
        #expect(noop.exitCode == 0, "\(noop)")
        requests = try await Self.requests(bucket)
        #expect(requests.get == before.get && requests.tagging == before.tagging, "\(requests)")
        #expect(try ws.stats(ws.file("noop.json"))["documents_skipped"] == 3)

        // 3. An object rewritten with other readers: read again with its new tags (one more of each).
        try await Self.put(
            bucket,
            "docs/hr/pay.txt",
            "Payroll now runs on the 25th of each month.\n",
            metadata: ["team": "payroll"],
            tags: ["readers": "hr"]
        )
        let changed = try await ws.sluice(
            ["run", ws.file("s3.yaml").path] + main.arguments + ["--quiet"],
            environment: S3SourceCLITests.environment,
            timeout: .seconds(240)
        )
        #expect(changed.exitCode == 0, "\(changed)")
        requests = try await Self.requests(bucket)
        #expect(requests.get == before.get + 1 && requests.tagging == before.tagging + 1, "\(requests)")
        documents = try await Self.metadata(ws, main)
        #expect(documents["hr/pay.txt"]?["access"] == .strings(["hr"]))
        #expect(documents["hr/pay.txt"]?["stage"] == nil, "a tag removed is gone from the records")
        #expect(documents["eng/design.md"]?["access"] == .strings(["eng"]))
    }
}
