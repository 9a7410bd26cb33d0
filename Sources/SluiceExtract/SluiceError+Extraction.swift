import SluiceCore

extension SluiceError.Code {
    /// The document's syntax is broken (JSON, CSV, XML), with the position in the message.
    public static let malformed = SluiceError.Code("malformed")
    /// Nesting deeper than the configured limit (JSON), refused before any recursion.
    public static let tooDeep = SluiceError.Code("too-deep")
    /// A compressed container inflates past the configured size or compression ratio (a zip bomb).
    public static let zipBomb = SluiceError.Code("zip-bomb")
    /// An XML part declares a DTD or entities, which could expand without bound (billion laughs).
    public static let xmlEntities = SluiceError.Code("xml-entities")
}
