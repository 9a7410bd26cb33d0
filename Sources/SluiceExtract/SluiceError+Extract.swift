import SluiceCore

extension SluiceError.Code {
    /// An encrypted document that could not be opened (no password configured, or a wrong one).
    public static let encrypted = SluiceError.Code("encrypted")
    /// A worker process died (a crash in C code) while extracting the document.
    public static let extractorCrashed = SluiceError.Code("extractor-crashed")
}
