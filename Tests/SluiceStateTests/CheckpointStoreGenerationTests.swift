import Foundation
import SluiceCore
import Testing

@testable import SluiceState

/// The checkpoint's records per index generation (docs/GENERATIONS.md): each generation has its own
/// document records and settings; the caches are shared.
@Suite struct CheckpointStoreGenerationTests {
    func directory() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent(
            "checkpoint-gen-\(UInt64.random(in: 0...UInt64.max))"
        )
    }

    func record(_ key: String, _ text: String) -> DocumentRecord {
        DocumentRecord(
            key: key,
            status: .indexed,
            contentHash: ContentHash(utf8: text),
            size: text.utf8.count,
            mtimeNanoseconds: 1,
            chunkIDs: [VectorID(rawValue: key)]
        )
    }

    @Test("each generation has its own document records and settings; g0 is the first table")
    func recordsAndSettingsPerGeneration() throws {
        let dir = directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        do {
            let original = try CheckpointStore(directory: dir)
            try original.commit(put: [record("a.txt", "a")])
            try original.setMetadata("shaping", "old")
        }
        do {
            let candidate = try CheckpointStore(directory: dir, generation: "g1")
            #expect(try candidate.documentCount() == 0)
            #expect(try candidate.metadata("shaping") == nil)
            try candidate.commit(put: [record("b.txt", "b")])
            try candidate.setMetadata("shaping", "new")
        }
        let named = try CheckpointStore(directory: dir, generation: GenerationManifest.original)
        #expect(try named.document("a.txt") != nil && named.document("b.txt") == nil)
        #expect(try named.metadata("shaping") == "old")
        var keys: [String] = []
        try named.forEachDocument(ofGeneration: "g1") { keys.append($0.key) }
        #expect(keys == ["b.txt"])

        try named.dropGeneration("g1")
        keys = []
        try named.forEachDocument(ofGeneration: "g1") { keys.append($0.key) }
        #expect(keys.isEmpty)
        #expect(try named.metadata("shaping") == "old", "dropping g1 touched g0's settings")
    }

    @Test("the extraction cache keeps the entries another generation still references")
    func extractionCacheSpansGenerations() throws {
        let dir = directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let identity = ExtractorIdentity(name: "pdf", version: 1, settings: [:])
        // The active generation (g0) references "a"; the candidate (g1) has not reached it yet.
        do {
            let active = try CheckpointStore(directory: dir)
            try active.commit(put: [record("a.txt", "a")])
        }
        let store = try CheckpointStore(directory: dir, generation: "g1")
        try store.commit(put: [record("b.txt", "b")])
        for text in ["a", "b", "gone"] {
            try store.cacheExtraction(
                ExtractedText(sections: [TextSection(text: text)]),
                content: ContentHash(utf8: text),
                identity: identity,
                capBytes: 1 << 20
            )
        }
        let removed = try store.collectExtractions(live: [identity], capBytes: 1 << 20, generations: ["g0"])
        #expect(removed == 1)
        #expect(try store.cachedExtraction(content: ContentHash(utf8: "a"), identity: identity) != nil)
        #expect(try store.cachedExtraction(content: ContentHash(utf8: "b"), identity: identity) != nil)
        #expect(try store.cachedExtraction(content: ContentHash(utf8: "gone"), identity: identity) == nil)
    }
}
