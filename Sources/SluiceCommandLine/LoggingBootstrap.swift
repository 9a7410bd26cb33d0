import Logging

/// The process's logger, labelled `sluice`, at `level` (trace … critical; info if unknown), writing through
/// ``EscapingLogHandler`` in the format ``LogOutput`` holds.
package func makeLogger(level: String) -> Logger {
    LoggingBootstrap.once()
    var logger = Logger(label: "sluice")
    logger.logLevel = Logger.Level(rawValue: level.lowercased()) ?? .info
    return logger
}

/// `--log-level`'s names (swift-log's levels), for checking an option before a command starts.
package let logLevelNames = Logger.Level.allCases.map(\.rawValue)

/// swift-log's bootstrap, once per process.
package enum LoggingBootstrap {
    private static let done: Void = {
        LoggingSystem.bootstrap { EscapingLogHandler(label: $0) }
    }()
    package static func once() { _ = done }
}
