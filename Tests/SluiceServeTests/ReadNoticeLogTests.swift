import Logging
import Synchronization
import Testing

@testable import SluiceServe

/// The service says what the store's searches skipped once each time it changes (`ReadNoticeLog.swift`).
@Suite struct ReadNoticeLogTests {
    /// Keeps the messages logged through it.
    struct Collecting: LogHandler {
        let lines: Lines
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            lines.lines.withLock { $0.append("\(event.level) \(event.message)") }
        }
    }

    final class Lines: Sendable {
        let lines = Mutex<[String]>([])
    }

    @Test("nothing for no notice, one warning for each new notice, none for the same one again")
    func oncePerChange() {
        let collected = Lines()
        let logger = Logger(label: "test") { _ in Collecting(lines: collected) }
        let log = ReadNoticeLog()
        log.report(nil, logger: logger)
        log.report("skipped 1 record(s)", logger: logger)
        log.report("skipped 1 record(s)", logger: logger)
        log.report("skipped 2 record(s)", logger: logger)
        log.report(nil, logger: logger)
        #expect(
            collected.lines.withLock { $0 } == [
                "warning search: skipped 1 record(s)", "warning search: skipped 2 record(s)",
            ]
        )
    }
}
