import Foundation
import SluiceCore
import SluiceLMDB
import SluiceTesting
import Testing

@testable import SluiceSinks

/// A keyword segment's entries packed into blocks (``KeywordSegmentBlocks``): every entry comes back, in order,
/// from the blocks; every term is found in the block a floor look-up gives, and a term not written is found in
/// none; blocks stay under the bound unless one entry alone is larger.
@Suite struct KeywordSegmentBlocksTests {
    /// Entries of `count` distinct terms in byte order, with lists of sizes from one byte to a few pages.
    static func entries(_ count: Int, seed: UInt64) -> [(term: [UInt8], value: [UInt8])] {
        var generator = SplitMix64(seed: seed)
        var terms = Set<[UInt8]>()
        while terms.count < count {
            let length = 1 + Int(generator.next() % 12)
            terms.insert((0..<length).map { _ in UInt8(ascii: "a") + UInt8(generator.next() % 6) })
        }
        return terms.sorted { $0.lexicographicallyPrecedes($1) }.map { term in
            let size: Int
            switch generator.next() % 50 {
            case 0: size = KeywordSegmentBlocks.blockBytes + Int(generator.next() % 9_000)  // a block of its own
            case 1: size = KeywordSegmentBlocks.blockBytes - term.count - 4  // about a block alone
            default: size = 1 + Int(generator.next() % 40)
            }
            return (term, (0..<size).map { _ in UInt8(truncatingIfNeeded: generator.next()) })
        }
    }

    static func pack(_ entries: [(term: [UInt8], value: [UInt8])]) -> [(first: [UInt8], block: [UInt8])] {
        var blocks: [(first: [UInt8], block: [UInt8])] = []
        var packer = KeywordSegmentBlocks.Packer()
        for entry in entries { packer.add(term: entry.term, value: entry.value) { blocks.append(($0, $1)) } }
        packer.finish { blocks.append(($0, $1)) }
        return blocks
    }

    /// The block a floor look-up of `term` lands on: the last whose first term is at or before it.
    static func floor(_ term: [UInt8], _ blocks: [(first: [UInt8], block: [UInt8])]) -> [UInt8]? {
        blocks.last { !term.lexicographicallyPrecedes($0.first) }?.block
    }

    @Test(
        "entries come back in order; each term is found in its floor block; blocks keep to the bound",
        arguments: [1, 2, 7, 300, 3_000]
    )
    func roundTrip(count: Int) throws {
        let entries = Self.entries(count, seed: UInt64(count))
        let blocks = Self.pack(entries)
        var decoded: [(term: [UInt8], value: [UInt8])] = []
        for (first, block) in blocks {
            var entriesInBlock = 0
            block.withUnsafeBytes { bytes in
                KeywordSegmentBlocks.forEachEntry(in: bytes) { term, value in
                    if entriesInBlock == 0 { #expect(Array(term) == first) }
                    decoded.append((Array(term), Array(value)))
                    entriesInBlock += 1
                }
            }
            #expect(entriesInBlock > 0)
            #expect(entriesInBlock == 1 || block.count <= KeywordSegmentBlocks.blockBytes)
        }
        #expect(decoded.map(\.term) == entries.map(\.term))
        #expect(decoded.map(\.value) == entries.map(\.value))
        if count >= 300 { #expect(blocks.count < count / 10) }  // small lists share blocks
        for entry in entries {
            let block = try #require(Self.floor(entry.term, blocks))
            let found = block.withUnsafeBytes { KeywordSegmentBlocks.value(of: entry.term, in: $0).map { Array($0) } }
            #expect(found == entry.value)
        }
        // Terms not written: before the first, between two (a written term with a byte more or less), after the last.
        let written = Set(entries.map(\.term))
        var absent: [[UInt8]] = [[0x20], [0x7f, 0x7f]]
        for entry in entries.prefix(200) {
            absent.append(entry.term + [UInt8(ascii: "a")])
            absent.append(Array(entry.term.dropLast()))
        }
        for term in absent where !term.isEmpty && !written.contains(term) {
            let found = Self.floor(term, blocks).flatMap { block in
                block.withUnsafeBytes { KeywordSegmentBlocks.value(of: term, in: $0).map { Array($0) } }
            }
            #expect(found == nil, "found \(term)")
        }
    }

    @Test("a block cut short ends its entries where they stop decoding")
    func truncatedBlock() {
        let entries = Self.entries(40, seed: 9).filter { $0.value.count < 100 }
        let block = Self.pack(entries)[0].block
        var whole = 0
        block.withUnsafeBytes { KeywordSegmentBlocks.forEachEntry(in: $0) { _, _ in whole += 1 } }
        #expect(whole > 2)
        for cut in [0, 1, 2, block.count / 2, block.count - 1] {
            var terms = 0
            Array(block.prefix(cut)).withUnsafeBytes { bytes in
                KeywordSegmentBlocks.forEachEntry(in: bytes) { _, _ in terms += 1 }
                _ = KeywordSegmentBlocks.value(of: entries.last!.term, in: bytes)
            }
            #expect(terms < whole)
        }
    }
}

/// The local store's keyword index over segments of many blocks: rankings equal the scan's while segments
/// are written, merged and replaced, for terms at a block's start, inside one, in a list of its own pages,
/// and terms no record holds.
@Suite struct KeywordSegmentBlocksIndexTests {
    typealias Keyword = LocalSinkKeywordTests

    /// A vocabulary of made-up words, each a distinct term (no stop word, no stem shared by two).
    static let vocabulary: [String] = (0..<3_000).map { index in
        let letters = Array("bcdfghjklmnpqrstvwxz")
        var word = "q"
        var value = index
        repeat {
            word.append(letters[value % letters.count])
            word.append("o")
            value /= letters.count
        } while value > 0
        return word
    }

    @Test("rankings equal the scan's over segments of many blocks, merged, with records replaced")
    func rankingsOverManyBlocks() async throws {
        let dir = Keyword.directory()
        defer { TemporaryDirectory.remove(dir) }
        let sink = try LocalSink(directory: dir)
        var generator = SplitMix64(seed: 0xB10C)
        var live: [String: VectorRecord] = [:]
        for round in 0..<12 {
            // 60 records a write: "zebra" in each (a list of its own pages once merged), 40 rare words each.
            let batch = (0..<60).map { index in
                let id = "r\((round * 60 + index) % 500)"  // ids repeat after 500: records replaced
                let words = (0..<40).map { _ in Self.vocabulary[Int(generator.next() % UInt64(Self.vocabulary.count))] }
                return Keyword.record(id, "zebra " + words.joined(separator: " "))
            }
            try await sink.upsert(batch)
            for record in batch { live[record.id.rawValue] = record }
        }
        sink.settleKeywordMerges()
        let records = live.keys.sorted().compactMap { live[$0] }
        // Segments span many blocks: far fewer keys than terms.
        let environment = sink.environment
        let (keys, terms) = try environment.read { txn in
            let index = KeywordIndex(environment: environment)
            var keys = 0
            var terms = 0
            try txn.forEach(try environment.database(KeywordIndex.postingsDatabase)) { _, block in
                keys += 1
                KeywordSegmentBlocks.forEachEntry(in: block) { _, _ in terms += 1 }
                return true
            }
            #expect(try index.load(txn).segments.count >= 1)
            return (keys, terms)
        }
        #expect(keys * 10 < terms)
        var queries = ["zebra", "zebra \(Self.vocabulary[0])", "qzzzo unknownword", Self.vocabulary[2_999]]
        for _ in 0..<30 {
            let words = (0..<3).map { _ in Self.vocabulary[Int(generator.next() % UInt64(Self.vocabulary.count))] }
            queries.append(words.joined(separator: " "))
        }
        for query in queries {
            // The best 100 (of up to 500 for "zebra": ties broken by id on both sides).
            let hits = try await Keyword.keyword(sink, query, k: 100)
            let expected = Keyword.expectedRanking(query, over: records).prefix(100)
            #expect(hits.map(\.record.id.rawValue) == expected.map(\.id), "\(query)")
            for (hit, want) in zip(hits, expected) { #expect(abs(Double(hit.score) - want.score) < 1e-4, "\(query)") }
        }
    }
}
