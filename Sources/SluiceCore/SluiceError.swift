/// The error type of Sluice: an opaque code, a message, an optional cause and where it was raised.
///
/// A document's failure reason is `code` + `message`; neither ever carries a secret.
public struct SluiceError: Error, Sendable, CustomStringConvertible {
    /// The kind of failure. Open-ended: new codes are static members, not enum cases, and every one
    /// is listed with its meaning in `SluiceError+Codes.swift`.
    public struct Code: Hashable, Sendable, Codable, CustomStringConvertible {
        public var rawValue: String
        public init(_ rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        public init(from decoder: any Decoder) throws {
            rawValue = try decoder.singleValueContainer().decode(String.self)
        }
        public func encode(to encoder: any Encoder) throws {
            var c = encoder.singleValueContainer()
            try c.encode(rawValue)
        }
    }

    public var code: Code
    public var message: String
    public var cause: (any Error)?
    public var file: String
    public var line: Int

    public init(_ code: Code, _ message: String, cause: (any Error)? = nil, file: String = #fileID, line: Int = #line) {
        self.code = code
        self.message = message
        self.cause = cause
        self.file = file
        self.line = line
    }

    /// `code: message`, the form stored as a document's failure reason.
    public var description: String { "\(code): \(message)" }

    /// The bounded label for stats (no associated values).
    public var shortDescription: String { code.rawValue }

    /// The error with its chain of causes, one per line, for logs.
    public func detailedDescription() -> String {
        var lines = ["\(description) [\(file):\(line)]"]
        var next = cause
        var depth = 1
        while let error = next {
            let indent = String(repeating: "  ", count: depth)
            if let sluice = error as? SluiceError {
                lines.append("\(indent)caused by \(sluice.description) [\(sluice.file):\(sluice.line)]")
                next = sluice.cause
            } else {
                lines.append("\(indent)caused by \(error)")
                next = nil
            }
            depth += 1
        }
        return lines.joined(separator: "\n")
    }
}

extension SluiceError {
    /// Wraps any error as a ``SluiceError`` (keeping one that already is).
    public static func wrap(_ error: any Error, as code: Code, _ message: String? = nil) -> SluiceError {
        if let sluice = error as? SluiceError { return sluice }
        return SluiceError(code, message ?? "\(error)", cause: error)
    }
}
