import Foundation
import SluiceCore
import Testing

@testable import SluiceState

/// What the extraction cache's collection keeps: entries of documents still referenced, and the captions of
/// pictures inside documents, which no document record names (keyed by the picture's bytes).
@Suite struct CheckpointStoreExtractionCollectionTests {
    @Test(
        "picture captions stay while their settings do, though no document names their hash; other unreferenced entries go"
    )
    func pictureCaptionsOutliveTheirDocument() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent(
            "checkpoint-collect-\(UInt64.random(in: 0...UInt64.max))"
        )
        defer { try? FileManager.default.removeItem(at: dir) }
        let store = try CheckpointStore(directory: dir)
        let document = ContentHash(utf8: "document")
        try store.commit(put: [
            DocumentRecord(
                key: "deck.pptx",
                status: .indexed,
                contentHash: document,
                size: 8,
                mtimeNanoseconds: 1,
                chunkIDs: [VectorID(rawValue: "deck")]
            )
        ])
        let pdf = ExtractorIdentity(name: "pdf", version: 1, settings: [:])
        let caption = ExtractorIdentity(name: "caption", version: 1, settings: ["model": "m"])
        let oldCaption = ExtractorIdentity(name: "caption", version: 1, settings: ["model": "old"])
        let picture = ContentHash(utf8: "picture")
        let entries: [(ContentHash, ExtractorIdentity)] = [
            (document, pdf), (ContentHash(utf8: "gone"), pdf), (picture, caption), (picture, oldCaption),
        ]
        for (content, identity) in entries {
            try store.cacheExtraction(
                ExtractedText(sections: [TextSection(text: "text")]),
                content: content,
                identity: identity,
                capBytes: 1 << 20
            )
        }
        let removed = try store.collectExtractions(live: [pdf, caption], capBytes: 1 << 20, unreferenced: [caption])
        #expect(removed == 2, "the unreferenced PDF text and the caption of a model no longer used")
        #expect(try store.cachedExtraction(content: document, identity: pdf) != nil)
        #expect(try store.cachedExtraction(content: picture, identity: caption) != nil)
        #expect(try store.cachedExtraction(content: picture, identity: oldCaption) == nil)
        #expect(try store.cachedExtraction(content: ContentHash(utf8: "gone"), identity: pdf) == nil)
        // Without the exception (picture captions off), an unreferenced caption goes like any entry.
        #expect(try store.collectExtractions(live: [pdf, caption], capBytes: 1 << 20) == 1)
        #expect(try store.cachedExtraction(content: picture, identity: caption) == nil)
    }
}
