import Foundation
import SluiceCore
import SluiceTesting
import Testing

/// The bounds of the S3 source's downloads (issue 34), against moto's server on loopback behind the stand-in's
/// control layer: `source.s3.concurrency` is the number of downloads in flight, reached and never passed, and
/// `extract.max_file_mb` bounds what a download reads even when the object answers more bytes than its listing
/// said (an object replaced by a larger one between the listing and the download). The first test found the
/// downloads running one at a time over plain HTTP: libcurl's `CURLOPT_PIPEWAIT` made each wait for the answer
/// on the connection in use (`CurlTransfer`).
@Suite(.serialized)
struct S3SourceDownloadBoundsCLITests {
    typealias Bucket = S3SourceCLITests.Bucket

    /// Six small documents under `docs/`.
    static func putDocuments(_ bucket: Bucket) async throws {
        var rng = SeededGenerator(seed: 0x53_0036)
        for index in 0..<6 {
            let text = Corpus.document(index: index, markdown: true, bytes: 1_500, rng: &rng)
            try await bucket.put("docs/doc-\(index).md", text)
        }
    }

    @Test("source.s3.concurrency downloads at once, no more", arguments: [2, 3])
    func concurrencyIsTheDownloadsInFlight(concurrency: Int) async throws {
        let ws = try Workspace("s3-concurrency-\(concurrency)")
        defer { ws.cleanUp() }
        let bucket = try await Bucket.launch(for: ws)
        defer { bucket.server.stop() }
        try await Self.putDocuments(bucket)
        // Each GET waits until `concurrency` are in flight (at most 10 s), so the downloads overlap whatever the
        // machine's speed; a source that allowed more would show more at the stand-in.
        try await bucket.faults(holdGets: concurrency)
        let result = try await S3SourceCLITests.run(
            ws,
            ws.target("main"),
            // Four extraction workers, so that the downloads' own bound is the one that binds (one download per
            // extraction at most: docs/SOURCES.md).
            ["--set", "source.s3.concurrency=\(concurrency)", "--set", "extract.parallelism=4"]
        )
        #expect(result.exitCode == 0, "\(result)")
        let stats = try await bucket.stats()
        #expect(stats.get == 6)
        #expect(stats.getMaxInFlight == concurrency, "GETs in flight at most: \(stats.getMaxInFlight)")
    }

    @Test("an object that answers more bytes than its listing said fails too-large at extract.max_file_mb")
    func downloadStopsAtTheLimit() async throws {
        let ws = try Workspace("s3-grown")
        defer { ws.cleanUp() }
        let bucket = try await Bucket.launch(for: ws)
        defer { bucket.server.stop() }
        try await Self.putDocuments(bucket)
        let main = ws.target("main")
        // Listed at about 1,500 bytes each; every answer carries 2 MB more: past the 1 MB limit.
        try await bucket.faults(padGets: 2 * 1_048_576)
        let statsURL = ws.file("grown.stats.json")
        let grown = try await S3SourceCLITests.run(
            ws,
            main,
            ["--set", "extract.max_file_mb=1", "--stats-json", statsURL.path]
        )
        #expect(grown.exitCode == 2, "\(grown)")
        let stats = try ws.stats(statsURL).decoded
        #expect(stats.failuresByCode["too-large"] == 6, "\(stats.failuresByCode)")
        #expect(stats.documentsUpserted == 0)

        // The objects answer their own bytes again: the next run indexes them all (a too-large failure keyed
        // on the listing is retried when the object's ETag or size changes; here it did not, so --retry-failed).
        try await bucket.faults()
        let retried = try await S3SourceCLITests.run(ws, main, ["--retry-failed"])
        #expect(retried.exitCode == 0, "\(retried)")
        #expect(try await S3SourceGuaranteesCLITests.keys(ws, main).count == 6)
    }
}
