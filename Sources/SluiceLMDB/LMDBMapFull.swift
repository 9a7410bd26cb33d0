import SluiceCore

/// The cause of an error that says an environment's map is full (`MDB_MAP_FULL`): the data file reached the
/// map size, and no write can succeed until the map is raised.
package struct LMDBMapFull: Error {
    /// The cause (LMDB's check makes it; tests and fault hooks too).
    package init() {}

    /// Whether `error`, or one of its causes, says the map is full.
    package static func isCause(of error: any Error) -> Bool {
        var current: (any Error)? = error
        while let error = current {
            if error is LMDBMapFull { return true }
            current = (error as? SluiceError)?.cause
        }
        return false
    }
}
