import SluiceCore

/// Qdrant's rule for a collection's (and an alias's) name, checked before any request: 1 to 255 characters,
/// none of `<>:"/\|?*`, NUL or U+001F (Qdrant's validation, as its maintainers state it in qdrant/qdrant#6073).
/// A generation's collection `<collection>_gN` and the alias `<collection>_active` add to `sink.collection`
/// (docs/GENERATIONS.md), so a name near the limit is refused here, naming the setting, rather than by the
/// server's validation error.
extension QdrantSink {
    /// The longest collection name Qdrant accepts, in characters.
    static let maxCollectionNameCharacters = 255

    /// - Throws: ``SluiceError/Code/configuration`` naming `sink.collection` when `name` breaks the rule.
    static func checkCollectionName(_ name: String) throws {
        let forbidden: Set<Character> = ["<", ">", ":", "\"", "/", "\\", "|", "?", "*", "\u{0}", "\u{1F}"]
        let length = name.count
        guard (1...maxCollectionNameCharacters).contains(length), !name.contains(where: forbidden.contains) else {
            throw SluiceError(
                .configuration,
                "sink.collection: Qdrant takes a collection name of 1 to \(maxCollectionNameCharacters) characters without <>:\"/\\|?*, not '\(DisplayEscaping.escaped(String(name.prefix(60))))'\(length > 60 ? "… (\(length) characters)" : "") (a generation adds _gN to it)"
            )
        }
    }
}
