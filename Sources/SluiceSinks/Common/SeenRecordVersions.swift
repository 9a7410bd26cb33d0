import Synchronization

/// The highest version of each key an ``InsertOnceRecordStore`` has read, so that the next read of the key
/// asks the store only for that version and newer ones: the manifest's versions are kept forever, and
/// `sluice serve` reads the manifest once a second.
package final class SeenRecordVersions: Sendable {
    private let highest = Mutex<[String: Int]>([:])

    package init() {}

    /// The highest version of `key` read so far; nil before the first read, or after a read found none.
    package func highest(of key: String) -> Int? {
        highest.withLock { $0[key] }
    }

    /// Records what a read of `key` found: its highest version, or nil when it found none.
    package func saw(_ key: String, version: Int?) {
        highest.withLock { $0[key] = version }
    }
}
