import Foundation
import SluiceCore
import SluiceHTTP
import SluiceState
import SluiceTesting
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The S3 source's change token in the checkpoint (`change_token`), against moto's S3 on loopback
/// (`s3_server.py`): records keep the ETag as it is, and records written the old way (the ETag hashed into
/// `mtime_ns`, no `change_token`) are still read right: unchanged objects are not downloaded again, a
/// changed one is.
@Suite(.serialized)
struct S3SourceChangeTokenTests {
    static let keyVariable = "SLUICE_PIPELINE_TEST_S3_KEY"
    static let secretVariable = "SLUICE_PIPELINE_TEST_S3_SECRET"

    static func put(_ server: StandInServer, _ key: String, _ text: String) async throws {
        let answer = try await HTTPClient.shared.send(
            HTTPRequest(method: "PUT", url: server.baseURL + "/_standin/object/" + key, body: Array(text.utf8))
        )
        #expect(answer.status == 200, "PUT \(key): \(answer.bodyText)")
    }

    /// GET object requests so far.
    static func gets(_ server: StandInServer) async throws -> Int {
        let answer = try await HTTPClient.shared.send(HTTPRequest(url: server.baseURL + "/_standin/stats"))
        let object = try JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: Int] ?? [:]
        return object["get"] ?? -1
    }

    @Test func recordsKeepTheETagAndOldRecordsStayValid() async throws {
        // Variables only this test names (the source reads its keys from the process's environment).
        setenv(Self.keyVariable, "sluice-test-key", 1)
        setenv(Self.secretVariable, "sluice-test-secret", 1)
        let server = try await StandInServer.launch(script: "s3_server.py", arguments: ["--bucket", "corpus"])
        defer { server.stop() }
        var harness = try PipelineHarness { configuration in
            configuration.source.kind = .s3
            configuration.source.s3.bucket = "corpus"
            configuration.source.s3.prefix = "docs"
            configuration.source.s3.region = "us-east-1"
            configuration.source.s3.maxRetries = 1
            configuration.source.s3.accessKeyEnv = Self.keyVariable
            configuration.source.s3.secretKeyEnv = Self.secretVariable
        }
        harness.configuration.source.s3.endpoint = server.baseURL
        defer { harness.cleanUp() }
        for index in 0..<3 {
            try await Self.put(server, "docs/note\(index).txt", "Note \(index): what the bucket holds, in words.")
        }

        let first = try await harness.run()
        #expect(first.documentsUpserted == 3)
        #expect(try await Self.gets(server) == 3)
        let record = try #require(try harness.record("note0.txt"))
        let token = try #require(record.changeToken, "the record keeps the ETag")
        #expect(token.hasPrefix("etag:\"") && token.hasSuffix("\""))
        #expect(record.mtimeNanoseconds > 1_700_000_000 * 1_000_000_000, "mtime_ns is the LastModified")

        // Rewrite the records as a Sluice before `change_token` wrote them: the ETag hashed into mtime_ns.
        do {
            let checkpoint = try CheckpointStore(directory: URL(fileURLWithPath: harness.configuration.state))
            var records: [DocumentRecord] = []
            try checkpoint.forEachDocument { records.append($0) }
            for index in records.indices {
                let etag = String(try #require(records[index].changeToken).dropFirst("etag:".count))
                records[index].mtimeNanoseconds = Int64(bitPattern: ContentHash(utf8: "etag:" + etag).low)
                records[index].changeToken = nil
            }
            try checkpoint.commit(put: records)
        }
        // A no-op run over the old records: nothing downloaded again.
        let noop = try await harness.run()
        #expect(noop.documentsSkipped == 3 && noop.documentsUpserted == 0)
        #expect(try await Self.gets(server) == 3, "old records cause no download")
        #expect(try harness.record("note0.txt")?.changeToken == nil, "a skipped record is left as it is")

        // A changed object under an old record: downloaded and indexed, its record now with the token.
        try await Self.put(server, "docs/note1.txt", "Note 1 changed: the bucket holds other words now.")
        let changed = try await harness.run()
        #expect(changed.documentsUpserted == 1 && changed.documentsSkipped == 2)
        #expect(try await Self.gets(server) == 4)
        #expect(try harness.record("note1.txt")?.changeToken?.hasPrefix("etag:") == true)
        // And a run after that downloads nothing.
        _ = try await harness.run()
        #expect(try await Self.gets(server) == 4)
    }
}
