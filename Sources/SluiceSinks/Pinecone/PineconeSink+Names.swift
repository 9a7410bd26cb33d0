import SluiceCore

/// Pinecone's identifier limits, checked before any request (docs.pinecone.io, "Identifier limits"): an
/// index's name (`sink.index`) is 1 to 45 characters of `a-z`, `0-9` and `-`, not starting or ending with
/// `-`; a namespace (`sink.namespace`) is at most 512 characters of ASCII except NUL (empty: the default
/// namespace). A generation's namespace `<namespace>_gN` adds to `sink.namespace` (docs/GENERATIONS.md), so a
/// name near the limit is refused here, naming the setting, rather than by the service's error.
extension PineconeSink {
    /// The longest index name Pinecone accepts, in characters.
    static let maxIndexNameCharacters = 45
    /// The longest namespace Pinecone accepts, in characters.
    static let maxNamespaceCharacters = 512

    /// - Throws: ``SluiceError/Code/configuration`` naming `sink.index` or `sink.namespace` when one breaks
    ///   Pinecone's limits.
    static func checkNames(index: String, namespace: String) throws {
        let lowercaseOrDigit = { (c: Unicode.Scalar) in ("a"..."z").contains(c) || ("0"..."9").contains(c) }
        let indexScalars = Array(index.unicodeScalars)
        let indexFits =
            (1...maxIndexNameCharacters).contains(indexScalars.count)
            && indexScalars.allSatisfy { lowercaseOrDigit($0) || $0 == "-" }
            && indexScalars.first != "-" && indexScalars.last != "-"
        guard indexFits else {
            throw SluiceError(
                .configuration,
                "sink.index: Pinecone takes an index name of 1 to \(maxIndexNameCharacters) characters of a-z, 0-9 and '-', not starting or ending with '-', not '\(shown(index))'"
            )
        }
        let namespaceScalars = namespace.unicodeScalars
        guard namespaceScalars.count <= maxNamespaceCharacters,
            namespaceScalars.allSatisfy({ $0.isASCII && $0 != "\u{0}" })
        else {
            throw SluiceError(
                .configuration,
                "sink.namespace: Pinecone takes a namespace of at most \(maxNamespaceCharacters) characters of ASCII except NUL, not '\(shown(namespace))' (a generation adds _gN to it)"
            )
        }
    }

    /// `name` for a message: escaped, cut at 60 characters with its length.
    private static func shown(_ name: String) -> String {
        let count = name.unicodeScalars.count
        return DisplayEscaping.escaped(String(name.prefix(60))) + (count > 60 ? "… (\(count) characters)" : "")
    }
}
