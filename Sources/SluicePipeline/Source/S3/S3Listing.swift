import Foundation
import SluiceCore

/// One object of a ListObjectsV2 page.
struct S3Object: Sendable, Hashable {
    /// The full object key (prefix included).
    var key: String
    var size: Int
    /// The ETag as listed, quotes included (`"9b2cf535f27731c974343645a3985328"`).
    var etag: String
    /// `LastModified`, nanoseconds since 1970 (0 when the listing had none).
    var lastModifiedNanoseconds: Int64

    /// What a checkpoint record written before records kept a change token (``DocumentRecord/changeToken``)
    /// holds in `mtime_ns` for this object: the ETag hashed to 64 bits (``SourceFile/legacyChangeStamp``).
    var legacyChangeStamp: Int64 {
        Int64(bitPattern: ContentHash(utf8: "etag:" + etag).low)
    }
}

/// One page of a ListObjectsV2 answer (`<ListBucketResult>`).
struct S3ListPage: Sendable, Hashable {
    var objects: [S3Object] = []
    /// `IsTruncated`: more pages follow.
    var isTruncated = false
    /// `NextContinuationToken`: where the next page starts.
    var nextContinuationToken: String?

    /// Reads the XML of a ListObjectsV2 answer. A small reader for this one document's shape (elements with
    /// text, the five XML entities and numeric character references), not a general XML parser.
    /// - Throws: ``SluiceError/Code/malformed`` when the answer is not a `ListBucketResult`, or is truncated
    ///   without a continuation token (a listing that cannot be continued is not complete).
    init(xml: [UInt8]) throws {
        let text = String(decoding: xml, as: UTF8.self)
        guard text.contains("<ListBucketResult") else {
            throw SluiceError(.malformed, "the ListObjectsV2 answer is not a ListBucketResult")
        }
        var rest = Substring(text)
        while let open = rest.range(of: "<Contents>") {
            guard let close = rest.range(of: "</Contents>", range: open.upperBound..<rest.endIndex) else {
                throw SluiceError(.malformed, "the ListObjectsV2 answer ends inside <Contents>")
            }
            let block = rest[open.upperBound..<close.lowerBound]
            guard let key = Self.element("Key", in: block), let sizeText = Self.element("Size", in: block),
                let size = Int(sizeText)
            else {
                throw SluiceError(.malformed, "an object of the ListObjectsV2 answer has no Key or Size")
            }
            let modified = Self.element("LastModified", in: block).flatMap(Self.nanoseconds(iso8601:)) ?? 0
            objects.append(
                S3Object(
                    key: key,
                    size: size,
                    etag: Self.element("ETag", in: block) ?? "",
                    lastModifiedNanoseconds: modified
                )
            )
            rest = rest[close.upperBound...]
        }
        // Outside the objects: the page's own fields.
        var outside = text
        while let open = outside.range(of: "<Contents>"), let close = outside.range(of: "</Contents>") {
            outside.removeSubrange(open.lowerBound..<close.upperBound)
        }
        isTruncated = Self.element("IsTruncated", in: Substring(outside)) == "true"
        nextContinuationToken = Self.element("NextContinuationToken", in: Substring(outside))
        if isTruncated, nextContinuationToken?.isEmpty ?? true {
            throw SluiceError(.malformed, "the ListObjectsV2 answer is truncated but has no NextContinuationToken")
        }
    }

    init(objects: [S3Object], isTruncated: Bool = false, nextContinuationToken: String? = nil) {
        self.objects = objects
        self.isTruncated = isTruncated
        self.nextContinuationToken = nextContinuationToken
    }

    /// The text of the first `<name>…</name>` in `xml`, entities decoded (``XMLElements/element(_:in:)``).
    static func element(_ name: String, in xml: Substring) -> String? { XMLElements.element(name, in: xml) }

    /// `2026-11-28T13:12:54.000Z` as nanoseconds since 1970.
    static func nanoseconds(iso8601 text: String) -> Int64? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        var date = formatter.date(from: text)
        if date == nil {
            formatter.formatOptions = [.withInternetDateTime]
            date = formatter.date(from: text)
        }
        return date.map { Int64(($0.timeIntervalSince1970 * 1000).rounded()) * 1_000_000 }
    }
}
