import Foundation
import SluiceCore
import Testing

@testable import SluicePipeline

/// The ListObjectsV2 reader, on answers shaped as S3 and moto write them.
@Suite struct S3ListPageTests {
    @Test func aTruncatedPageWithEscapedKeys() throws {
        let xml = """
            <?xml version="1.0" encoding="UTF-8"?>
            <ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>corpus</Name><Prefix>docs/</Prefix>\
            <KeyCount>2</KeyCount><MaxKeys>2</MaxKeys><IsTruncated>true</IsTruncated>\
            <Contents><Key>docs/a &amp; b.txt</Key><LastModified>2026-11-28T13:12:54.000Z</LastModified>\
            <ETag>&quot;5eb63bbbe01eeed093cb22bb8f5acdc3&quot;</ETag><Size>11</Size><StorageClass>STANDARD</StorageClass></Contents>\
            <Contents><Key>docs/caf&#xE9;.md</Key><LastModified>2026-11-28T13:12:55Z</LastModified>\
            <ETag>"d41d8cd98f00b204e9800998ecf8427e-2"</ETag><Size>0</Size></Contents>\
            <NextContinuationToken>1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=</NextContinuationToken></ListBucketResult>
            """
        let page = try S3ListPage(xml: Array(xml.utf8))
        #expect(page.objects.map(\.key) == ["docs/a & b.txt", "docs/café.md"])
        #expect(page.objects.map(\.size) == [11, 0])
        #expect(page.objects[0].etag == "\"5eb63bbbe01eeed093cb22bb8f5acdc3\"")
        #expect(page.objects[0].lastModifiedNanoseconds == 1_795_871_574_000_000_000)
        #expect(page.objects[1].lastModifiedNanoseconds == 1_795_871_575_000_000_000)
        #expect(page.isTruncated)
        #expect(page.nextContinuationToken == "1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=")
        // The stamp older records kept follows the ETag only.
        var touched = page.objects[0]
        touched.lastModifiedNanoseconds += 1
        #expect(touched.legacyChangeStamp == page.objects[0].legacyChangeStamp)
        touched.etag = "\"0000\""
        #expect(touched.legacyChangeStamp != page.objects[0].legacyChangeStamp)
    }

    @Test func theLastPageAndAnEmptyOne() throws {
        let last = try S3ListPage(
            xml: Array(
                "<ListBucketResult><IsTruncated>false</IsTruncated><KeyCount>0</KeyCount></ListBucketResult>".utf8
            )
        )
        #expect(last.objects.isEmpty && !last.isTruncated && last.nextContinuationToken == nil)
    }

    @Test func whatCannotBeContinuedIsAnError() {
        // Truncated without a token: the listing could not go on, so it is not complete.
        #expect(throws: SluiceError.self) {
            try S3ListPage(xml: Array("<ListBucketResult><IsTruncated>true</IsTruncated></ListBucketResult>".utf8))
        }
        #expect(throws: SluiceError.self) {
            try S3ListPage(xml: Array("<Error><Code>AccessDenied</Code></Error>".utf8))
        }
        #expect(throws: SluiceError.self) {
            try S3ListPage(xml: Array("<ListBucketResult><Contents><Key>a</Key>".utf8))
        }
    }
}
