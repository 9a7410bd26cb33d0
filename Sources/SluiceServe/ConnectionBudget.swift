import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// How many connections the server may hold open: `serve.max_connections`, lowered so that the descriptors
/// they take leave room for the rest (the store's files, a run's pipes, the listening socket). Past it the
/// server stops accepting until one closes (the others wait in the kernel's backlog) instead of failing
/// `accept` with EMFILE, and the idle timeout frees places, so `/health` keeps answering (docs/SERVE.md,
/// "Connections").
enum ConnectionBudget {
    /// Descriptors kept free beyond those open at start.
    static let reserve = 64

    /// The connections allowed under `limit` descriptors with `open` already in use.
    static func connections(configured: Int, limit: Int, open: Int) -> Int {
        max(1, min(configured, limit - open - reserve))
    }

    /// Raises the soft descriptor limit to the hard one (as Go's runtime does; the unit files set both) and
    /// returns it with the number of descriptors open now.
    static func descriptors() -> (limit: Int, open: Int) {
        var limits = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limits)
        if limits.rlim_cur < limits.rlim_max {
            var raised = limits
            raised.rlim_cur = limits.rlim_max
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limits = raised }
        }
        let open = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? 16
        let limit = limits.rlim_cur == rlim_t.max ? Int.max / 2 : Int(clamping: limits.rlim_cur)
        return (limit, open)
    }
}
