import SluiceCore

/// Chroma's rule for a collection's name, checked before any request: 3 to 512 characters of `a-z`, `A-Z`,
/// `0-9`, `.`, `_` and `-`, starting and ending with a letter or digit, without `..`, and not an IPv4 address
/// in dotted decimal (its server's validation: "Expected a name containing 3-512 characters from
/// [a-zA-Z0-9._-], starting and ending with a character in [a-zA-Z0-9]", checked against the real 1.5.9 server
/// by `ChromaCollectionNameTests`). A generation's collection `<collection>_gN` and the records' collection
/// `<collection>_generations` add to `sink.collection` (docs/GENERATIONS.md), so a name near the limit is
/// refused here, naming the setting, rather than by the server's validation error.
extension ChromaSink {
    /// The longest collection name Chroma accepts, in characters.
    static let maxCollectionNameCharacters = 512

    /// - Parameter derived: What the name is when it is not `sink.collection` itself (`the generation records'
    ///   collection`), for the message.
    /// - Throws: ``SluiceError/Code/configuration`` naming `sink.collection` when `name` breaks the rule.
    static func checkCollectionName(_ name: String, derived: String? = nil) throws {
        guard let problem = collectionNameProblem(name) else { return }
        let shown =
            DisplayEscaping.escaped(String(name.prefix(60))) + (name.count > 60 ? "… (\(name.count) characters)" : "")
        let what = derived.map { "\($0) '\(shown)'" } ?? "'\(shown)'"
        throw SluiceError(
            .configuration,
            "sink.collection: Chroma takes a collection name of 3 to \(maxCollectionNameCharacters) characters of a-z, A-Z, 0-9, '.', '_' and '-', starting and ending with a letter or digit, without '..', not an IPv4 address; \(what) \(problem) (a generation adds _gN to it, its records' collection _generations)"
        )
    }

    /// What is wrong with `name`, nil when Chroma takes it.
    static func collectionNameProblem(_ name: String) -> String? {
        let scalars = Array(name.unicodeScalars)
        guard (3...maxCollectionNameCharacters).contains(scalars.count) else {
            return "has \(scalars.count) characters"
        }
        let allowed = { (scalar: Unicode.Scalar) in
            scalar.isASCII && (isAlphanumeric(scalar) || "._-".unicodeScalars.contains(scalar))
        }
        guard scalars.allSatisfy(allowed) else { return "holds another character" }
        guard isAlphanumeric(scalars[0]), isAlphanumeric(scalars[scalars.count - 1]) else {
            return "does not start and end with a letter or digit"
        }
        guard !name.contains("..") else { return "holds '..'" }
        guard !isIPv4Address(name) else { return "is an IPv4 address" }
        return nil
    }

    private static func isAlphanumeric(_ scalar: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar)
    }

    /// Whether `name` reads as an IPv4 address the way Chroma's server reads one (Rust's `Ipv4Addr`): four
    /// decimal parts of 0 to 255, without a leading zero (`01.2.3.4` and `256.1.1.1` are names).
    static func isIPv4Address(_ name: String) -> Bool {
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4
            && parts.allSatisfy { part in
                guard (1...3).contains(part.count), part.allSatisfy({ $0.isASCII && $0.isNumber }),
                    let value = Int(part), value <= 255
                else { return false }
                return part == "0" || !part.hasPrefix("0")
            }
    }
}
