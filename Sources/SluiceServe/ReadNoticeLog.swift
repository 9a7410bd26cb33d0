import Logging
import Synchronization

/// Says in the service's log what the store's searches skipped because it could not read it
/// (``VectorSink/readNotice``: the local store's records that do not decode), once each time it changes, so a
/// damaged record is reported without a line for every search that meets it (docs/RELIABILITY.md).
final class ReadNoticeLog: Sendable {
    private let last = Mutex<String?>(nil)

    /// Logs `notice` as a warning unless it is nil or the one logged last.
    func report(_ notice: String?, logger: Logger) {
        guard let notice else { return }
        let changed = last.withLock { last in
            guard last != notice else { return false }
            last = notice
            return true
        }
        if changed { logger.warning("search: \(notice)") }
    }
}
