import Foundation
import SluiceCore
import Testing

@testable import SluicePipeline

/// ``DocumentWork/settleUpserted()``: a document the sink acknowledged keeps what the commit stage records
/// and releases the rest (its vectors and texts), so documents waiting for the commit hold little.
@Suite struct DocumentWorkTests {
    static func upsertable(_ key: String, _ texts: [String]) -> DocumentWork {
        let file = SourceFile(key: key, url: URL(fileURLWithPath: "/nowhere/\(key)"), size: 1, mtimeNanoseconds: 0)
        var document = DocumentWork(file: file, previous: nil)
        document.contentHash = ContentHash(utf8: texts.joined())
        document.chunks = texts.enumerated().map { ordinal, text in
            let chunk = Chunk(ordinal: ordinal, text: text, tokenCount: 2, headingPath: ["H"], metadata: ["m": "v"])
            var prepared = PreparedChunk(
                chunk: chunk,
                hash: chunk.hash,
                id: VectorID(documentKey: key, ordinal: ordinal, chunkHash: chunk.hash),
                vector: [Float](repeating: 0.5, count: 384)
            )
            prepared.embedPrefix = "Title: "
            return prepared
        }
        return document
    }

    @Test func anUpsertedDocumentKeepsWhatItsCommitRecordsAndReleasesItsVectorsAndTexts() {
        var document = Self.upsertable("a.txt", ["first chunk", "second chunk", "third"])
        var unreleased = document
        unreleased.outcome = .upserted
        let before = CommitStage.record(for: unreleased, now: 1)
        let ids = document.chunks.map(\.id)
        let hashes = document.chunks.map(\.hash)

        document.settleUpserted()

        #expect(document.isSettled)
        guard case .upserted = document.outcome else {
            Issue.record("outcome is \(document.outcome), not upserted")
            return
        }
        #expect(document.chunks.map(\.id) == ids)
        #expect(document.chunks.map(\.hash) == hashes)
        #expect(document.chunks.allSatisfy { $0.vector == nil })
        #expect(document.chunks.allSatisfy { $0.chunk.text.isEmpty && $0.embedPrefix.isEmpty })
        #expect(document.chunks.allSatisfy { $0.chunk.headingPath.isEmpty && $0.chunk.metadata.isEmpty })
        let after = CommitStage.record(for: document, now: 1)
        #expect(after.chunkIDs == before.chunkIDs)
        #expect(after.contentHash == before.contentHash)
        #expect(after.status == .indexed)
    }
}
