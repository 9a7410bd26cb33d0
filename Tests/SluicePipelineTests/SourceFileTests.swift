import Foundation
import SluiceCore
import Testing

@testable import SluicePipeline

/// ``SourceFile/hasSameListing(as:)``: what decides from the listing alone that an entry is unchanged.
@Suite struct SourceFileTests {
    static func file(size: Int = 10, mtime: Int64 = 1_000, token: String? = nil, legacy: Int64? = nil) -> SourceFile {
        var file = SourceFile(
            key: "a.txt",
            url: URL(fileURLWithPath: "/nowhere/a.txt"),
            size: size,
            mtimeNanoseconds: mtime
        )
        file.changeToken = token
        file.legacyChangeStamp = legacy
        return file
    }

    static func record(size: Int = 10, mtime: Int64 = 1_000, token: String? = nil) -> DocumentRecord {
        var record = DocumentRecord(
            key: "a.txt",
            status: .indexed,
            contentHash: nil,
            size: size,
            mtimeNanoseconds: mtime
        )
        record.changeToken = token
        return record
    }

    @Test func aFolderFileComparesSizeAndMtime() {
        #expect(Self.file().hasSameListing(as: Self.record()))
        #expect(!Self.file(mtime: 1_001).hasSameListing(as: Self.record()))
        #expect(!Self.file(size: 11).hasSameListing(as: Self.record()))
        // A record a bucket wrote (its LastModified as mtime) is not a folder file's, whatever the mtime.
        #expect(!Self.file().hasSameListing(as: Self.record(token: "etag:\"abc\"")))
    }

    @Test func aTokenIsComparedAsItIsAndTheMtimeDoesNotCount() {
        let token = "etag:\"abc\""
        #expect(Self.file(mtime: 5, token: token).hasSameListing(as: Self.record(mtime: 7, token: token)))
        #expect(!Self.file(token: "etag:\"abd\"").hasSameListing(as: Self.record(token: token)))
        #expect(!Self.file(size: 11, token: token).hasSameListing(as: Self.record(token: token)))
        // A record without a token, from a folder: not this object's.
        #expect(!Self.file(token: token).hasSameListing(as: Self.record()))
    }

    /// A record of an S3 object written before `change_token`: the ETag hashed into `mtime_ns`.
    @Test func aRecordWrittenTheOldWayIsReadTheOldWay() {
        let object = S3Object(key: "docs/a.txt", size: 10, etag: "\"abc\"", lastModifiedNanoseconds: 1_000)
        let old = Self.record(mtime: object.legacyChangeStamp)
        let unchanged = Self.file(token: "etag:\"abc\"", legacy: object.legacyChangeStamp)
        #expect(unchanged.hasSameListing(as: old), "upgrading downloads nothing again")
        var changed = object
        changed.etag = "\"abd\""
        #expect(!Self.file(token: "etag:\"abd\"", legacy: changed.legacyChangeStamp).hasSameListing(as: old))
        // A source that never wrote records that way: its token alone, and an old record does not match.
        #expect(!Self.file(mtime: old.mtimeNanoseconds, token: "etag:\"abc\"").hasSameListing(as: old))
    }

    /// Old records decode (no `change_token`), and a folder's records are written as before (no key).
    @Test func theRecordsCodingKeepsOldRecordsReadable() throws {
        let old = Data(
            #"{"key":"a.txt","status":"indexed","size":10,"mtime_ns":42,"chunks":[],"pending":[],"attempts":0,"updated":0}"#
                .utf8
        )
        let record = try JSONDecoder().decode(DocumentRecord.self, from: old)
        #expect(record.changeToken == nil && record.mtimeNanoseconds == 42)
        let folder = String(decoding: try JSONEncoder().encode(record), as: UTF8.self)
        #expect(!folder.contains("change_token"))
        var remote = record
        remote.changeToken = "etag:\"abc\""
        let again = try JSONDecoder().decode(DocumentRecord.self, from: try JSONEncoder().encode(remote))
        #expect(again.changeToken == "etag:\"abc\"")
    }
}
