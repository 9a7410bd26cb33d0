import Foundation
import Logging
import Sluice

/// The log handler of the CLI: swift-log's stream handler on standard error, with every message and
/// metadata value passed through ``DisplayEscaping`` first. Log lines carry file names (document keys,
/// the source path) and messages built from them; a line break in a name would otherwise forge a log
/// line, and an escape sequence would reach the terminal.
///
/// With `--log-format json` (``LogOutput``) the same events are written as ``JSONLogLine``s instead:
/// JSON's own escaping takes the place of ``DisplayEscaping``, so a shipper gets the real text back.
struct EscapingLogHandler: LogHandler {
    private var inner: StreamLogHandler
    private let label: String
    /// The handler's own metadata, unescaped (for JSON lines).
    private var rawMetadata: Logger.Metadata = [:]

    init(label: String) {
        self.label = label
        inner = StreamLogHandler.standardError(label: label)
    }

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
        set {
            rawMetadata = newValue
            inner.metadata = newValue.mapValues(Self.escaped)
        }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { inner[metadataKey: key] }
        set {
            rawMetadata[key] = newValue
            inner[metadataKey: key] = newValue.map(Self.escaped)
        }
    }

    func log(event: LogEvent) {
        var event = event
        if let error = event.error {
            // As swift-log's stream handler shows an attached error, but escaped like the rest (it
            // would add it raw otherwise).
            event.metadata = (event.metadata ?? [:]).merging(
                ["error.message": "\(error)", "error.type": "\(String(reflecting: type(of: error)))"]) { explicit, _ in
                    explicit
                }
            event.error = nil
        }
        if LogOutput.format == .json {
            var metadata = rawMetadata
            if let provided = metadataProvider?.get() { metadata.merge(provided) { _, new in new } }
            if let own = event.metadata { metadata.merge(own) { _, new in new } }
            let line = JSONLogLine.render(
                date: Date(),
                level: event.level,
                label: label,
                message: event.message.description,
                metadata: metadata
            )
            FileHandle.standardError.write(Data((line + "\n").utf8))
            return
        }
        event.message = "\(DisplayEscaping.escaped(event.message.description))"
        event.metadata = event.metadata?.mapValues(Self.escaped)
        LiveLine.clearing { [event] in inner.log(event: event) }
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
