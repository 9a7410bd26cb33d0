import Foundation
import SluiceCore
import SluiceHTTP

#if canImport(Glibc)
import Glibc
#endif

/// ListObjectsV2 and GET against an S3-compatible service, through the one HTTP client (libcurl, which
/// signs each request with SigV4), with the project's retries: a connection error, a timeout or a 5xx is
/// transient; `503 SlowDown`, a 429 and the throttling codes (`SlowDown`, `Throttling`,
/// `RequestLimitExceeded`, …) are rate limits, handled as the embedders handle a 429 (the server's
/// `Retry-After` replaces the backoff).
///
/// Secrets stay in the request's ``AWSSigning`` and its `x-amz-security-token` header: no message, log or
/// error carries them (errors name the bucket, the key and S3's own `Code` and `Message`).
struct S3Client: Sendable {
    let settings: PipelineConfiguration.Source.S3
    let bucket: String
    let region: String
    let credentials: S3Credentials
    let http: HTTPClient
    /// The one request loop (no gate): `source.s3.max_retries`, the server's `Retry-After` up to two minutes.
    let call: RemoteCall<OpenGate, ContinuousClock>
    /// Requests made, for the run's log and the tests (no-op runs make no GET).
    let requests: S3RequestCounter

    /// SHA-256 of an empty payload: every request here has none.
    static let emptyPayloadHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    init(settings: PipelineConfiguration.Source.S3, credentials: S3Credentials, http: HTTPClient = .shared) {
        self.settings = settings
        self.bucket = settings.bucket ?? ""
        self.region = Self.region(settings)
        self.credentials = credentials
        self.http = http
        self.call = RemoteCall(policy: .source(maxRetries: settings.maxRetries))
        self.requests = S3RequestCounter(workers: settings.concurrency)
    }

    /// `source.s3.region`, else `AWS_REGION`, else `AWS_DEFAULT_REGION`, else `us-east-1`.
    static func region(
        _ settings: PipelineConfiguration.Source.S3,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> String {
        settings.region ?? [environment["AWS_REGION"], environment["AWS_DEFAULT_REGION"]].compactMap { $0 }
            .first { !$0.isEmpty } ?? "us-east-1"
    }

    /// Path style with an endpoint (MinIO, Ceph, moto), virtual-host on AWS, unless `path_style` says.
    var pathStyle: Bool { settings.pathStyle ?? (settings.endpoint != nil) }

    /// The URL of the bucket (`key` empty) or of an object, without a query.
    func url(key: String = "") -> String {
        let base =
            settings.endpoint.map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 }
            ?? "https://s3.\(region).amazonaws.com"
        let path = key.isEmpty ? "" : Self.encode(key, keepSlash: true)
        if pathStyle { return "\(base)/\(Self.encode(bucket, keepSlash: false))/\(path)" }
        guard let scheme = base.range(of: "://") else { return base }
        return String(base[..<scheme.upperBound]) + bucket + "." + String(base[scheme.upperBound...]) + "/" + path
    }

    /// Percent-encoding as SigV4 wants it: every byte but `A-Z a-z 0-9 - _ . ~` (and `/` in a path).
    static func encode(_ text: String, keepSlash: Bool) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."),
                UInt8(ascii: "~"):
                out.append(Character(Unicode.Scalar(byte)))
            case UInt8(ascii: "/") where keepSlash:
                out.append("/")
            default:
                out += String(format: "%%%02X", byte)
            }
        }
        return out
    }

    /// One page of ListObjectsV2 under `prefix`, from `continuationToken` (nil: the first page).
    /// - Throws: an unavailability after the retries are spent (exit 6), ``SluiceError/Code/configuration``
    ///   for an answer no retry changes (no such bucket, access denied).
    func listPage(prefix: String, continuationToken: String?, maxKeys: Int) async throws -> S3ListPage {
        // The query's parameters in SigV4's canonical order (sorted by name), each value encoded.
        var query: [String] = []
        if let continuationToken {
            query.append("continuation-token=\(Self.encode(continuationToken, keepSlash: false))")
        }
        query.append("list-type=2")
        query.append("max-keys=\(maxKeys)")
        if !prefix.isEmpty { query.append("prefix=\(Self.encode(prefix, keepSlash: false))") }
        let request = signed(HTTPRequest(url: url() + "?" + query.joined(separator: "&")))
        let response = try await withRetries(what: "listing s3://\(bucket)/\(prefix)") {
            requests.listed()
            let started = ContinuousClock.now
            let response = try await http.send(request)
            requests.meter.answered(after: .now - started)
            return response
        }
        do {
            return try S3ListPage(xml: response.body)
        } catch let error as SluiceError {
            throw SluiceError(
                .dependencyUnavailable,
                "listing s3://\(bucket)/\(prefix): \(error.message)",
                cause: error
            )
        }
    }

    /// Downloads an object into `path` (created, mode 0600), at most `maxBytes`, as it arrives.
    /// - Returns: the bytes written, and the answer's headers (names lowercased: the user metadata is
    ///   `x-amz-meta-*`).
    /// - Throws: ``SluiceError/Code/tooLarge`` past `maxBytes`, ``SluiceError/Code/unreadable`` for an
    ///   object that is gone (404) or refused, an unavailability after the retries are spent.
    func download(
        key: String,
        to path: String,
        maxBytes: Int,
        writer: BlockingExecutor
    ) async throws -> (written: Int, headers: [String: String]) {
        var request = signed(HTTPRequest(url: url(key: key)))
        request.maxResponseBytes = maxBytes
        return try await withRetries(what: "fetching s3://\(bucket)/\(key)") {
            requests.fetched()
            let started = ContinuousClock.now
            let response = try await http.stream(request)
            guard (200..<300).contains(response.status) else {
                let answer = try await response.collect()
                requests.meter.answered(after: .now - started)
                try Self.judge(answer, what: "fetching s3://\(bucket)/\(key)", isObject: true)
                return (0, [:])
            }
            let written = try await DownloadFile.write(response.body, to: path, writer: writer)
            requests.meter.answered(after: .now - started, bytes: written)
            return (written, response.headers)
        }
    }

    /// An object's tags (GetObjectTagging: `GET /KEY?tagging`).
    /// - Throws: as ``download(key:to:maxBytes:writer:)`` does (a 403 is a setting: `s3:GetObjectTagging`).
    func tags(key: String) async throws -> [String: String] {
        let request = signed(HTTPRequest(url: url(key: key) + "?tagging"))
        let what = "reading the tags of s3://\(bucket)/\(key)"
        let response = try await withRetries(what: what) { () async throws -> HTTPResponse in
            requests.taggingRead()
            let started = ContinuousClock.now
            let response = try await http.send(request)
            requests.meter.answered(after: .now - started)
            try Self.judge(response, what: what, isObject: true)
            return response
        }
        return S3ObjectMetadata.tags(xml: response.body)
    }

    /// The request, signed (SigV4 by libcurl), with the payload hash S3 requires (of its body) and the
    /// session token.
    func signed(_ request: HTTPRequest) -> HTTPRequest {
        var request = request
        request.timeout = .milliseconds(Int64(settings.timeoutSeconds * 1000))
        request.pathAsIs = true  // keys are names: `a/../b` is not `b`
        request.awsSigning = AWSSigning(
            region: region,
            service: "s3",
            accessKey: credentials.accessKey,
            secretKey: credentials.secretKey
        )
        request.headers.append(
            (
                "x-amz-content-sha256",
                request.body.isEmpty ? Self.emptyPayloadHash : SHA256.hex(SHA256.digest(request.body))
            )
        )
        if let token = credentials.sessionToken { request.headers.append(("x-amz-security-token", token)) }
        return request
    }

    /// What an error answer means: thrown as a retryable ``S3Retry`` (5xx, 429, throttling), or as the
    /// error the caller reports.
    static func judge(_ response: HTTPResponse, what: String, isObject: Bool) throws {
        guard !response.isSuccess else { return }
        let code = S3ListPage.element("Code", in: Substring(response.bodyText)) ?? ""
        let message = S3ListPage.element("Message", in: Substring(response.bodyText)) ?? ""
        let said = "HTTP \(response.status)\(code.isEmpty ? "" : " \(code)")\(message.isEmpty ? "" : ": \(message)")"
        let throttling: Set<String> = [
            "SlowDown", "Throttling", "ThrottlingException", "RequestLimitExceeded", "TooManyRequests",
            "RequestThrottled", "ProvisionedThroughputExceededException", "BandwidthLimitExceeded",
        ]
        if response.status == 429 || response.status == 503 || throttling.contains(code) {
            throw S3Retry(reason: "\(what): \(said)", rateLimited: true, headers: response.headers)
        }
        if response.status >= 500 || response.status == 408 || code == "RequestTimeout" || code == "InternalError" {
            throw S3Retry(reason: "\(what): \(said)", rateLimited: false, headers: response.headers)
        }
        if isObject, response.status == 404 {
            throw SluiceError(.unreadable, "\(what): the object is gone (\(said))")
        }
        if [401, 403].contains(response.status) {
            throw SluiceError(
                .configuration,
                "\(what): \(said) (check the credentials and the bucket's permissions: s3:ListBucket, s3:GetObject)"
            )
        }
        throw SluiceError(isObject ? .unreadable : .configuration, "\(what): \(said)")
    }

    /// Runs `body` until it returns, retrying transport failures and retryable answers through the one
    /// request loop (``RemoteCall``, no gate): the retries spent are an unavailability (exit 6).
    func withRetries<T: Sendable>(what: String, _ body: () async throws -> T) async throws -> T {
        try await call.run(
            what: what,
            onRetry: { requests.retried() },
            gaveUp: { SluiceError(.dependencyUnavailable, "s3: \($0)") },
            attempt: {
                do {
                    let result = try await body()
                    if let response = result as? HTTPResponse { try Self.judge(response, what: what, isObject: false) }
                    return .finished(result)
                } catch let retry as S3Retry {
                    return .retry(
                        retry.rateLimited ? .rateLimited : .transient,
                        reason: retry.reason,
                        headers: retry.headers
                    )
                }
            }
        )
    }
}

/// A retryable S3 answer (5xx, 429, throttling), with its headers (the server's wait, read by the loop).
struct S3Retry: Error, Sendable {
    var reason: String
    var rateLimited: Bool
    var headers: [String: String]
}
