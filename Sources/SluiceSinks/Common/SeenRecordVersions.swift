import Synchronization

/// The highest version of each key an ``InsertOnceRecordStore`` has read, so that the next read of the key
/// asks the store only for that version and newer ones: the manifest's versions are kept forever, and
/// `sluice serve` reads the manifest once a second.
///
/// There is one per store location in a process (``of(_:)``): `sluice serve` makes a new sink for every
/// poll, and each starts from what the last one saw.
package final class SeenRecordVersions: Sendable {
    private let highest = Mutex<[String: Int]>([:])
    private static let byLocation = Mutex<[String: SeenRecordVersions]>([:])

    package init() {}

    /// The memory of the records at `location` (the store's address and the records' collection), the same
    /// for every sink of that store in this process.
    package static func of(_ location: String) -> SeenRecordVersions {
        byLocation.withLock { known in
            if let memory = known[location] { return memory }
            let memory = SeenRecordVersions()
            known[location] = memory
            return memory
        }
    }

    /// The highest version of `key` read so far; nil before the first read, or after a read found none.
    package func highest(of key: String) -> Int? {
        highest.withLock { $0[key] }
    }

    /// Records what a read of `key` found: its highest version, or nil when it found none.
    package func saw(_ key: String, version: Int?) {
        highest.withLock { $0[key] = version }
    }
}
