import Foundation
import Testing

@testable import SluiceCore

@Suite struct ContentHashTests {
    @Test func matchesXXHSumH2() {
        // `printf 'hello sluice\n' | xxhsum -H2`
        #expect(ContentHash(utf8: "hello sluice\n").hex == "415c27bf17e76a3f7a099a40d3d03c86")
    }

    @Test func hexRoundTripsAndCodes() throws {
        let hash = ContentHash(utf8: "some text")
        #expect(ContentHash(hex: hash.hex) == hash)
        let data = try JSONEncoder().encode(hash)
        #expect(try JSONDecoder().decode(ContentHash.self, from: data) == hash)
        #expect(ContentHash(hex: "xyz") == nil)
    }

    @Test func chunkHashIgnoresWhitespaceLayout() {
        let a = Chunk(ordinal: 0, text: "  one two\n\nthree ", tokenCount: 3)
        let b = Chunk(ordinal: 5, text: "one two three", tokenCount: 3)
        #expect(a.hash == b.hash)
        #expect(Chunk.normalize("\t a \n b  ") == "a b")
    }

    @Test func vectorIDsAreDeterministicAndDistinct() {
        let hash = ContentHash(utf8: "chunk")
        let id = VectorID(documentKey: "a.txt", ordinal: 0, chunkHash: hash)
        #expect(id == VectorID(documentKey: "a.txt", ordinal: 0, chunkHash: hash))
        #expect(id != VectorID(documentKey: "a.txt", ordinal: 1, chunkHash: hash))
        #expect(id != VectorID(documentKey: "b.txt", ordinal: 0, chunkHash: hash))
        let uuid = id.uuidString
        #expect(uuid.count == 36)
        #expect(UUID(uuidString: uuid) != nil)
    }
}
