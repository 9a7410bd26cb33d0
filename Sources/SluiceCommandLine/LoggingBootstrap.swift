import Logging

/// The process's logger, labelled `sluice`, at `level` (trace … critical; info if unknown), writing through
/// ``EscapingLogHandler`` in the format ``LogOutput`` holds.
package func makeLogger(level: String) -> Logger {
    LoggingBootstrap.once()
    var logger = Logger(label: "sluice")
    logger.logLevel = Logger.Level(rawValue: level.lowercased()) ?? .info
    return logger
}

/// swift-log's bootstrap, once per process.
package enum LoggingBootstrap {
    private static let done: Void = {
        LoggingSystem.bootstrap { EscapingLogHandler(label: $0) }
    }()
    package static func once() { _ = done }
}
