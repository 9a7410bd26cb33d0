import SluiceCore
import Testing

@Suite struct ShardTests {
    @Test("K/N parses; anything else is a usage error")
    func parsing() throws {
        let shard = try Shard(parsing: "2/5")
        #expect(shard.index == 2 && shard.count == 5)
        #expect(shard.description == "2/5")
        for bad in ["", "3", "3/3", "-1/2", "1/0", "a/b", "1/2/3", "1 of 2"] {
            #expect(throws: SluiceError.self, "'\(bad)'") { try Shard(parsing: bad) }
        }
    }

    @Test("every key belongs to exactly one shard of N, and shards are about even")
    func partition() throws {
        let keys = (0..<6000).map { "folder-\($0 % 17)/document-\($0).txt" }
        for count in [1, 2, 3, 7] {
            let shards = try (0..<count).map { try Shard(index: $0, count: count) }
            var sizes = Array(repeating: 0, count: count)
            for key in keys {
                let owners = shards.filter { $0.owns(key) }
                #expect(owners.count == 1, "\(key) has \(owners.count) owners of \(count)")
                if let owner = owners.first { sizes[owner.index] += 1 }
            }
            let expected = Double(keys.count) / Double(count)
            for size in sizes { #expect(abs(Double(size) - expected) < expected * 0.1, "sizes \(sizes)") }
        }
    }

    @Test("the assignment is pinned: the same key lands in the same shard in every version")
    func stability() throws {
        // XXH3-64 (seed 0) of the UTF-8 key, modulo N; the values come from `printf %s KEY | xxhsum -H3`.
        // Changing them moves the documents of existing deployments between shards.
        #expect(xxh3_64("docs/a.txt") % 4 == 2)
        #expect(try Shard(index: 2, count: 4).owns("docs/a.txt"))
        #expect(xxh3_64("notes/ünïcode.md") % 3 == 2)
        #expect(try Shard(index: 2, count: 3).owns("notes/ünïcode.md"))
    }
}
