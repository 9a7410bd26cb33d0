import Foundation
import SluiceClient
import SluiceTesting
import Testing

/// `GET /v1/documents` and `GET /v1/documents/{key}` of the real `sluice serve`: keys are bytes (NFC and
/// NFD twins are two documents, paged in the checkpoint's byte order), and a document's chunks come in
/// order, a page at a time, with an explicit `truncated`/`next_cursor`.
@Suite(.serialized)
struct ServeDocumentsCLITests {
    static let nfc = "caf\u{E9}.txt"
    static let nfd = "cafe\u{301}.txt"

    /// Pages of one document each skipped documents when the cursor was compared in Swift's `String`
    /// order (canonical equivalence) while LMDB walks in byte order; the NFD key's page found its NFC twin.
    @Test("NFC and NFD twins: every document once in byte order, and each key finds its own document")
    func canonicallyEquivalentKeys() async throws {
        let ws = try Workspace("serve-nfd")
        defer { ws.cleanUp() }
        let target = ws.target("t")
        // Both spellings, and keys that sort between them in one order and not in the other. A list, not a
        // dictionary: Swift's String equality would make the twins one key.
        let texts: [(key: String, text: String)] = [
            (Self.nfc, "The espresso menu of the first cafe, written as one scalar."),
            (Self.nfd, String(repeating: "The decomposed cafe serves filter coffee and tea today. ", count: 40)),
            ("cafe-a.txt", "Another cafe, plain ASCII."), ("cafez.txt", "The last cafe in the list."),
            ("caf\u{FB}.txt", "A name with u circumflex."), ("cafe\u{300}.txt", "A grave accent, decomposed."),
        ]
        for (key, text) in texts { try Corpus.write(text, to: ws.corpus.appendingPathComponent(key)) }
        try await ws.run(target, expecting: 0)
        let server = try await ServeProcess.start(ws, target)
        let client = server.client()

        var seen: [String] = []
        var cursor: String?
        repeat {
            let page = try await client.documents(cursor: cursor, limit: 1)
            seen += page.documents.map(\.key)
            cursor = page.nextCursor
        } while cursor != nil && seen.count <= texts.count
        let byBytes = texts.map(\.key).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        #expect(seen.map { Array($0.utf8) } == byBytes.map { Array($0.utf8) }, "\(seen)")

        for key in [Self.nfc, Self.nfd] {
            let detail = try await client.document(key: key, chunkLimit: 1000)
            #expect(Array(detail.document.key.utf8) == Array(key.utf8))
            let chunks = try #require(detail.chunks)
            #expect(chunks.count == detail.document.chunks, "\(key): \(chunks.count) of \(detail.document.chunks)")
            let word = key.utf8.elementsEqual(Self.nfc.utf8) ? "espresso" : "decomposed"  // not ==: NFC == NFD
            #expect(chunks.allSatisfy { $0.text.contains(word) }, "\(key): \(chunks.map(\.text))")
        }
        _ = try await server.stop()
    }

    /// A large document's chunks came back as an arbitrary 1,000 with no sign that the answer was partial.
    @Test("a large document's chunks: pages in ordinal order, truncated with next_cursor until the last")
    func chunksInPages() async throws {
        let ws = try Workspace("serve-chunks")
        defer { ws.cleanUp() }
        var target = ws.target("t")
        target.sink = [
            "--set", "sink.path=\(target.index.path)", "--set", "chunk.max_tokens=16", "--set",
            "chunk.overlap_tokens=0",
        ]
        let sentences = (0..<400).map { "Sentence number \($0) talks about sluice gate \($0 * 7) only." }
        try Corpus.write(sentences.joined(separator: " "), to: ws.corpus.appendingPathComponent("big.txt"))
        try Corpus.write("A small one.", to: ws.corpus.appendingPathComponent("small.txt"))
        try await ws.run(target, expecting: 0)
        let server = try await ServeProcess.start(ws, target)
        let client = server.client()

        let first = try await client.document(key: "big.txt")
        let total = first.document.chunks
        #expect(total > 250, "the test needs a document of more than two default pages: \(total)")
        #expect(first.chunks?.map(\.ordinal) == Array(0..<100))
        #expect(first.truncated && first.nextCursor == "100")

        var ordinals: [Int] = []
        var texts: [String] = []
        var cursor: String?
        var pages = 0
        repeat {
            let page = try await client.document(key: "big.txt", chunkCursor: cursor, chunkLimit: 120)
            let chunks = try #require(page.chunks)
            ordinals += chunks.map(\.ordinal)
            texts += chunks.map(\.text)
            #expect(page.truncated == (page.nextCursor != nil))
            cursor = page.nextCursor
            pages += 1
        } while cursor != nil && pages < 100
        #expect(ordinals == Array(0..<total))
        #expect(texts.joined(separator: " ").contains("Sentence number 399"))

        let small = try await client.document(key: "small.txt")
        #expect(small.chunks?.count == 1 && !small.truncated && small.nextCursor == nil)
        let past = try await client.document(key: "big.txt", chunkCursor: String(total + 5))
        #expect(past.chunks == [] && !past.truncated)

        for query in ["?limit=0", "?limit=1001", "?cursor=-1", "?cursor=abc"] {
            let (status, _, body) = try await server.exchange("GET", "/v1/documents/big.txt" + query)
            #expect(status == 400 && ServeProcess.errorCode(body) == "usage", "\(query): \(status)")
        }
        _ = try await server.stop()
    }
}
