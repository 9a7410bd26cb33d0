import Foundation
import SluiceCore
import SluiceHTTP
import SluiceSinks

/// The records of a sharded deployment's index generations (``SharedGenerationRecords``) in an S3 bucket
/// (`generations.coordination: s3://bucket/prefix`, docs/GENERATIONS.md, "Pinecone with a coordination
/// store"), for a vector store that cannot keep them itself (Pinecone).
///
/// A record's version is the object `<prefix>/<deployment>/<key>@<version>` (``InsertOnceRecordStore``),
/// its body `{"key", "version", "value", "writer"}` (JSON), written with `PUT` and `If-None-Match: *`: S3
/// writes it only when no object has the key, and answers `412 Precondition Failed` otherwise (nothing
/// written: the write lost, and reads the winner's writer back); a `409 ConditionalRequestConflict` (a
/// write of the same key raced it) is retried, and the retry then finds the winner's object. AWS S3's
/// reads and listings see a write once it was answered (strong read-after-write consistency), so a read
/// after the winner's `200` sees it. A store that ignores the header would overwrite, and two writers would
/// both win: the tests run against a stand-in that enforces it as AWS documents (`s3_server.py`).
///
/// Several deployments may share a bucket and prefix: each one's objects are under its own name (a `/` in
/// it written `%2F`, so that no deployment's folder is inside another's).
final class S3CoordinationStore: CoordinationRecordStore {
    let client: S3Client
    /// The folder of the deployment's records: `<prefix>/<deployment>/`.
    let folder: String
    let location: String

    /// - Parameters:
    ///   - bucket: the bucket, and `prefix` the folder in it (either without a trailing `/`).
    ///   - settings: `generations.s3` (endpoint, region, retries, timeout).
    ///   - credentials: the keys requests are signed with.
    ///   - deployment: the name of the deployment's records.
    init(
        bucket: String,
        prefix: String,
        settings: PipelineConfiguration.Source.S3,
        credentials: S3Credentials,
        deployment: String
    ) {
        var settings = settings
        settings.bucket = bucket
        client = S3Client(settings: settings, credentials: credentials)
        let name = deployment.replacingOccurrences(of: "/", with: "%2F")
        folder = (prefix.isEmpty ? "" : prefix + "/") + name + "/"
        location =
            "s3://\(bucket)/\(folder)" + (settings.endpoint.map { " at \(redactedURL($0))" } ?? "")
    }

    /// `s3://bucket/prefix` as bucket and prefix (no trailing `/`); nil when no bucket is named.
    static func bucketAndPrefix(_ url: String) -> (bucket: String, prefix: String)? {
        let rest = url.dropFirst("s3://".count)
        let parts = rest.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let bucket = parts.first, !bucket.isEmpty else { return nil }
        var prefix = parts.count > 1 ? String(parts[1]) : ""
        while prefix.hasSuffix("/") { prefix.removeLast() }
        return (String(bucket), prefix)
    }

    var seenVersions: SeenRecordVersions { .of(location) }

    /// The body of a record's object.
    private struct Body: Codable {
        var key: String
        var version: Int
        var value: String
        var writer: String
    }

    func insertIfAbsent(_ record: VersionedGenerationRecord) async throws {
        let body = Body(key: record.key, version: record.version, value: record.value, writer: record.writer)
        _ = try await client.putIfAbsent(key: folder + record.id, body: Array(try JSONEncoder().encode(body)))
    }

    func versionedRecord(id: String) async throws -> VersionedGenerationRecord? {
        guard let bytes = try await client.object(key: folder + id) else { return nil }
        guard let body = try? JSONDecoder().decode(Body.self, from: Data(bytes)) else {
            throw SluiceError(
                .stateCorrupt,
                "the coordination store's record s3://\(client.bucket)/\(folder)\(id) cannot be read as a generation record"
            )
        }
        return VersionedGenerationRecord(key: body.key, version: body.version, value: body.value, writer: body.writer)
    }

    func allVersionedRecords() async throws -> [VersionedGenerationRecord] {
        try await records(ids: try await client.keys(prefix: folder).map { String($0.dropFirst(folder.count)) })
    }

    func versionedRecords(of key: String, from version: Int) async throws -> [VersionedGenerationRecord] {
        let ids = try await client.keys(prefix: folder + key + "@").map { String($0.dropFirst(folder.count)) }
        return try await records(ids: ids.filter { (Self.version(of: $0) ?? 0) >= version })
    }

    func deleteVersionedRecords(ids: [String]) async throws {
        for id in ids { try await client.deleteObject(key: folder + id) }
    }

    func checkReachable() async throws -> Int? {
        try await client.keys(prefix: folder + "manifest@").compactMap { Self.version(of: $0) }.max()
    }

    /// The version an id or object key ends with (`…@<version>`).
    static func version(of id: String) -> Int? {
        id.lastIndex(of: "@").flatMap { Int(id[id.index(after: $0)...]) }
    }

    /// The records under `ids` (one GET each; an id deleted meanwhile is skipped).
    private func records(ids: [String]) async throws -> [VersionedGenerationRecord] {
        var found: [VersionedGenerationRecord] = []
        for id in ids where Self.version(of: id) != nil {
            if let record = try await versionedRecord(id: id) { found.append(record) }
        }
        return found
    }
}
