#if canImport(Glibc)
import Glibc
#endif

/// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34), which Swift's Glibc module does not declare:
/// one file action that closes every descriptor from a number up in the child, whatever the parent has open.
package enum PosixSpawnCloseFrom {
    private typealias AddCloseFrom =
        @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32

    private static let addCloseFrom: AddCloseFrom? = {
        guard let handle = dlopen(nil, RTLD_NOW),
            let pointer = dlsym(handle, "posix_spawn_file_actions_addclosefrom_np")
        else { return nil }
        return unsafeBitCast(pointer, to: AddCloseFrom.self)
    }()

    /// Whether this glibc has the action (2.34 and later).
    package static var isAvailable: Bool { addCloseFrom != nil }

    /// Adds the action closing every descriptor from `first` up (after the `dup2` actions that set up 0–2).
    /// Used by the extract workers' spawn and by the tests' children (`SpawnedChild`).
    /// - Returns: false when this glibc has no such action (older than 2.34): the child then inherits what
    ///   is not close-on-exec.
    @discardableResult
    package static func add(_ actions: inout posix_spawn_file_actions_t, from first: Int32 = 3) -> Bool {
        guard let addCloseFrom else { return false }
        return addCloseFrom(&actions, first) == 0
    }
}
