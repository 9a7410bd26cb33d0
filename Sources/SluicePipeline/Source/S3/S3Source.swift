import Foundation
import SluiceCore
import SluiceHTTP

#if canImport(Glibc)
import Glibc
#endif

/// `source.kind: s3`: the objects of a bucket under a prefix.
///
/// - Keys: the object key below the prefix (`manuals/a.pdf` under `manuals/` is `a.pdf`); include/exclude
///   and `--shard` apply to it, as to a folder's relative path. Keys ending in `/` (folder markers) are not
///   documents.
/// - Change detection from the listing alone: the record keeps the size and the ETag (its `change_token`,
///   ``SourceFile/changeToken``); an object whose both are unchanged is skipped without a GET. A changed one
///   is downloaded, hashed, and processed only if its bytes differ from what is indexed.
/// - Reading: a streaming GET into a private temporary file (mode 0600, under the state folder's `fetch/`),
///   stopped at `extract.max_file_mb`, deleted once extracted; at most `source.s3.concurrency` at a time.
/// - Prune: only after a listing that went to its last page (``completeListing()``); a page that fails after
///   its retries throws, and nothing is deleted.
struct S3Source: DocumentSource {
    let client: S3Client
    /// The prefix as a folder: empty, or ending in `/`.
    let prefix: String
    let include: [GlobPattern]
    let exclude: [GlobPattern]
    let shard: Shard
    let leftOut = LeftOutFiles()
    /// Where downloads are written while they are extracted (created 0700 on first use).
    let fetchDirectory: URL
    let slots: DownloadSlots
    /// Writes of downloaded bytes (blocking calls, off the cooperative pool).
    let writer: BlockingExecutor
    /// `source.s3.metadata_from_object` and `metadata_from_tags`: read with each download.
    let objectMetadata: S3ObjectMetadata

    /// - Parameter accessField: `access.field` when access control is on (its values are lists of readers).
    init(
        configuration: PipelineConfiguration.Source,
        shard: Shard,
        fetchDirectory: URL,
        accessField: String? = nil,
        environment: [String: String] = ProcessInfo.processInfo.environment,
        http: HTTPClient = .shared
    ) throws {
        let settings = configuration.s3
        objectMetadata = S3ObjectMetadata(settings: settings, accessField: accessField)
        let credentials = try S3Credentials.resolve(settings, environment: environment)
        client = S3Client(settings: settings, credentials: credentials, http: http)
        let prefix = settings.prefix.hasPrefix("/") ? String(settings.prefix.dropFirst()) : settings.prefix
        self.prefix = prefix.isEmpty || prefix.hasSuffix("/") ? prefix : prefix + "/"
        include = configuration.include.map(GlobPattern.init)
        exclude = configuration.exclude.map(GlobPattern.init)
        self.shard = shard
        self.fetchDirectory = fetchDirectory
        slots = DownloadSlots(settings.concurrency)
        writer = BlockingExecutor(label: "sl-fetch", threads: 1)
    }

    var name: String { "s3://\(client.bucket)/\(prefix)" }
    var readsLocally: Bool { false }

    /// Requests made so far.
    var requests: S3RequestCounter { client.requests }

    var fetchMeter: StageMeter? { requests.meter }

    func countingCopy() -> (any DocumentSource)? { nil }

    func location(of key: String) -> URL {
        URL(string: "s3://\(client.bucket)/\(S3Client.encode(prefix + key, keepSlash: true))")
            ?? URL(fileURLWithPath: "/").appendingPathComponent(key)
    }

    /// The credentials were found when the source was made; nothing else can be known without a request.
    func prepare() throws {}

    func selects(_ key: String) -> Bool {
        include.contains { $0.matches(key) } && !exclude.contains { $0.matches(key) } && shard.owns(key)
    }

    nonisolated(nonsending) func walk(_ body: (Result<SourceFile, SourceProblem>) async -> Bool) async throws {
        var token: String?
        var tokens: Set<String> = []
        var lastKey: [UInt8]?
        repeat {
            let page = try await client.listPage(
                prefix: prefix,
                continuationToken: token,
                maxKeys: client.settings.listPageSize
            )
            // A listing comes in key order, each page after the last: one that repeats a page (a server
            // answering the same continuation token, or keys not after the previous page's) would never end;
            // checked before any of its objects is handed on, so none is read twice.
            if let first = page.objects.first.map({ Array($0.key.utf8) }), let lastKey,
                !lastKey.lexicographicallyPrecedes(first)
            {
                throw SluiceError(
                    .dependencyUnavailable,
                    "the S3 listing repeats keys it listed already: it would never end"
                )
            }
            for object in page.objects {
                guard object.key.hasPrefix(prefix) else { continue }
                let key = String(object.key.dropFirst(prefix.count))
                if key.isEmpty || key.hasSuffix("/") { continue }
                guard selects(key) else {
                    if shard.owns(key) { leftOut.file(key) }
                    continue
                }
                var file = SourceFile(
                    key: key,
                    url: location(of: key),
                    size: object.size,
                    mtimeNanoseconds: object.lastModifiedNanoseconds
                )
                file.changeToken = "etag:" + object.etag
                file.legacyChangeStamp = object.legacyChangeStamp
                if await !body(.success(file)) { return }
            }
            if let last = page.objects.last { lastKey = Array(last.key.utf8) }
            token = page.isTruncated ? page.nextContinuationToken : nil
            if let token, !tokens.insert(token).inserted {
                throw SluiceError(
                    .dependencyUnavailable,
                    "the S3 listing repeats a continuation token: it would never end"
                )
            }
        } while token != nil
    }

    func completeListing() async throws -> SourceListing {
        var keys: Set<String> = []
        try await walk { entry in
            if case .success(let file) = entry { keys.insert(file.key) }
            return true
        }
        let listed = keys
        return SourceListing { listed.contains($0) }
    }

    func materialize(_ file: SourceFile, maxBytes: Int) async throws -> MaterializedFile {
        let path = try await DownloadFile.path(in: fetchDirectory, for: file.key, writer: writer)
        await slots.acquire()
        let written: Int
        var metadata: [String: MetadataValue] = [:]
        var charset: String?
        do {
            let answer = try await client.download(
                key: prefix + file.key,
                to: path,
                maxBytes: maxBytes,
                writer: writer
            )
            written = answer.written
            charset = WebContentType.charset(answer.headers["content-type"])
            if !objectMetadata.isEmpty {
                // Tags only when a rule reads them: one request per object downloaded, never per listed one.
                var tags: [String: String] = [:]
                if objectMetadata.readsTags { tags = try await client.tags(key: prefix + file.key) }
                metadata = objectMetadata.metadata(headers: answer.headers, tags: tags)
            }
            await slots.release()
        } catch {
            await slots.release()
            unlink(path)
            throw error
        }
        var materialized = try DownloadFile.materialized(key: file.key, path: path, size: written)
        materialized.metadata = metadata
        materialized.charset = charset
        return materialized
    }

    /// Downloads a killed run left behind.
    func removeLeftovers() {
        try? FileManager.default.removeItem(at: fetchDirectory)
    }

    var requestSummary: String? {
        "\(requests.listRequests) LIST, \(requests.getRequests) GET, "
            + (objectMetadata.readsTags ? "\(requests.taggingRequests) GetObjectTagging, " : "")
            + "\(requests.retriedRequests) retried"
    }

    func check(shard: Shard) async -> DependencyCheck {
        var matching = 0
        do {
            try await walk { entry in
                if case .success = entry { matching += 1 }
                return true
            }
        } catch let error as SluiceError {
            let unavailable = error.isUnavailability || error.code == .dependencyUnavailable
            return DependencyCheck(
                "source",
                unavailable ? .unavailable : .failed,
                "\(name): \(error.message) (\(client.credentials))",
                fix: unavailable
                    ? "check source.s3.endpoint and the network, then run again"
                    : "check source.s3.bucket, the region and the credentials"
            )
        } catch {
            return DependencyCheck("source", .failed, "\(name): \(error)")
        }
        let pages = client.requests.listRequests
        let shardText = shard == .whole ? "" : " of shard \(shard)"
        let hint = matching == 0 ? " (check source.s3.prefix, source.include and source.exclude)" : ""
        return DependencyCheck(
            "source",
            .ok,
            "\(name): \(matching) objects match include/exclude\(shardText)\(hint); listed in \(pages) request\(pages == 1 ? "" : "s"), \(client.credentials)"
                + (leftOut.summary.map { "; left out: \($0)" } ?? "")
        )
    }
}
