import Logging
import Sluice

/// The log handler of the CLI: swift-log's stream handler on standard error, with every message and
/// metadata value passed through ``DisplayEscaping`` first. Log lines carry file names (document keys,
/// the source path) and messages built from them; a line break in a name would otherwise forge a log
/// line, and an escape sequence would reach the terminal.
struct EscapingLogHandler: LogHandler {
    private var inner: StreamLogHandler

    init(label: String) { inner = StreamLogHandler.standardError(label: label) }

    var logLevel: Logger.Level {
        get { inner.logLevel }
        set { inner.logLevel = newValue }
    }

    var metadataProvider: Logger.MetadataProvider? {
        get { inner.metadataProvider }
        set { inner.metadataProvider = newValue }
    }

    var metadata: Logger.Metadata {
        get { inner.metadata }
        set { inner.metadata = newValue.mapValues(Self.escaped) }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { inner[metadataKey: key] }
        set { inner[metadataKey: key] = newValue.map(Self.escaped) }
    }

    func log(event: LogEvent) {
        var event = event
        event.message = "\(DisplayEscaping.escaped(event.message.description))"
        event.metadata = event.metadata?.mapValues(Self.escaped)
        inner.log(event: event)
    }

    static func escaped(_ value: Logger.Metadata.Value) -> Logger.Metadata.Value {
        switch value {
        case .string(let text): .string(DisplayEscaping.escaped(text))
        case .stringConvertible(let convertible): .string(DisplayEscaping.escaped(convertible.description))
        case .dictionary(let dictionary): .dictionary(dictionary.mapValues(escaped))
        case .array(let values): .array(values.map(escaped))
        }
    }
}
