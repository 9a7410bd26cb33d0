import Foundation
import SluiceCore
import Testing

@testable import SluiceLMDB

/// ``LMDBTransaction/withFloor(_:_:_:)``: the entry of the largest key at or before a key; appends
/// (`put(…, append: true)`) keep key order and refuse a key that is not above the last.
@Suite struct LMDBFloorTests {
    private static func withEnvironment(_ body: (LMDBEnvironment, LMDBDatabase) throws -> Void) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "lmdb-floor-\(UInt64.random(in: 0...UInt64.max))"
        )
        defer { try? FileManager.default.removeItem(at: directory) }
        let environment = try LMDBEnvironment(path: directory, mapSize: 1 << 26)
        try body(environment, try environment.database("keys"))
    }

    private static func floor(_ environment: LMDBEnvironment, _ dbi: LMDBDatabase, _ key: String) throws -> String? {
        try environment.read { txn in
            try txn.withFloor(dbi, Array(key.utf8)) { found, value in
                String(decoding: found, as: UTF8.self) + "=" + String(decoding: value, as: UTF8.self)
            }
        }
    }

    @Test("the floor of a key: itself, the one before, none before the first, the last after every key")
    func floorOfAKey() throws {
        try Self.withEnvironment { environment, keys in
            #expect(try Self.floor(environment, keys, "m") == nil)  // an empty database
            try environment.write { txn in
                for key in ["b", "d", "da", "f"] { try txn.put(keys, Array(key.utf8), Array(key.uppercased().utf8)) }
            }
            #expect(try Self.floor(environment, keys, "a") == nil)
            #expect(try Self.floor(environment, keys, "b") == "b=B")
            #expect(try Self.floor(environment, keys, "c") == "b=B")
            #expect(try Self.floor(environment, keys, "d") == "d=D")
            #expect(try Self.floor(environment, keys, "d\u{0}") == "d=D")
            #expect(try Self.floor(environment, keys, "da") == "da=DA")
            #expect(try Self.floor(environment, keys, "db") == "da=DA")
            #expect(try Self.floor(environment, keys, "f") == "f=F")
            #expect(try Self.floor(environment, keys, "zzz") == "f=F")
        }
    }

    @Test("appends go at the end in key order; a key not above the last is refused and nothing is written")
    func appends() throws {
        try Self.withEnvironment { environment, keys in
            // Enough keys to split many pages at the end.
            try environment.write { txn in
                for index in 0..<5_000 {
                    try txn.put(
                        keys,
                        withUnsafeBytes(of: UInt32(index).bigEndian) { Array($0) },
                        [1, 2, 3],
                        append: true
                    )
                }
            }
            let refused =
                (try? environment.write { txn in
                    try txn.put(keys, withUnsafeBytes(of: UInt32(10).bigEndian) { Array($0) }, [9], append: true)
                }) == nil
            #expect(refused)
            let (count, ordered) = try environment.read { txn in
                var previous: UInt32?
                var ordered = true
                try txn.forEach(keys) { key, value in
                    let number = key.loadUnaligned(as: UInt32.self).bigEndian
                    if let previous, number != previous + 1 { ordered = false }
                    if Array(value) != [1, 2, 3] { ordered = false }
                    previous = number
                    return true
                }
                return (try txn.count(keys), ordered)
            }
            #expect(count == 5_000)
            #expect(ordered)
        }
    }
}
