import Foundation
import SluiceCore
import SluiceHTTP

/// Small objects written, read and deleted whole: the records of an S3 coordination store
/// (``S3CoordinationStore``), through the same signing, retries and error judgement as the source's reads.
extension S3Client {
    /// What a conditional `PUT` found.
    enum PutOutcome: Sendable, Equatable {
        /// The object was written (`200`).
        case created
        /// An object had the key already (`412 PreconditionFailed`): nothing was written.
        case exists
    }

    /// Writes `body` under `key` only when no object has that key (`If-None-Match: *`). A `409
    /// ConditionalRequestConflict` (a write of the same key raced this one) is retried, as AWS asks; the
    /// retry then finds the key when the other write was made.
    /// - Throws: an unavailability after the retries are spent (exit 6), ``SluiceError/Code/configuration``
    ///   for an answer no retry changes (no such bucket, access denied).
    func putIfAbsent(key: String, body: [UInt8]) async throws -> PutOutcome {
        var request = HTTPRequest(method: "PUT", url: url(key: key), headers: [("If-None-Match", "*")], body: body)
        request.headers.append(("Content-Type", "application/json"))
        let what = "writing s3://\(bucket)/\(key)"
        let signedRequest = signed(request)
        return try await withRetries(what: what) { () async throws -> PutOutcome in
            let response = try await http.send(signedRequest)
            if response.status == 412 { return .exists }
            if response.status == 409 {
                throw S3Retry(reason: "\(what): HTTP 409 ConditionalRequestConflict", rateLimited: false, headers: [:])
            }
            try Self.judge(response, what: what, isObject: false)
            return .created
        }
    }

    /// The bytes of the object `key`; nil when there is none (`404`).
    func object(key: String) async throws -> [UInt8]? {
        let request = signed(HTTPRequest(url: url(key: key)))
        let what = "reading s3://\(bucket)/\(key)"
        return try await withRetries(what: what) { () async throws -> [UInt8]? in
            let response = try await http.send(request)
            if response.status == 404 { return nil }
            try Self.judge(response, what: what, isObject: false)
            return response.body
        }
    }

    /// Deletes the object `key` (S3 answers `204` whether or not it was there).
    func deleteObject(key: String) async throws {
        let request = signed(HTTPRequest(method: "DELETE", url: url(key: key)))
        let what = "deleting s3://\(bucket)/\(key)"
        _ = try await withRetries(what: what) { () async throws -> Bool in
            let response = try await http.send(request)
            if response.status == 404 { return true }
            try Self.judge(response, what: what, isObject: false)
            return true
        }
    }

    /// Every object key under `prefix`, page after page.
    func keys(prefix: String) async throws -> [String] {
        var keys: [String] = []
        var token: String?
        repeat {
            let page = try await listPage(prefix: prefix, continuationToken: token, maxKeys: 1000)
            keys += page.objects.map(\.key)
            token = page.isTruncated ? page.nextContinuationToken : nil
        } while token != nil
        return keys
    }
}
