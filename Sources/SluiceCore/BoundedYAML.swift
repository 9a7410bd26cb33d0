import Yams

/// YAML loaded as `Yams.load` loads it, but bounded and without its traps: a mapping key that is not a
/// scalar (`? [a, b]`) makes Yams' constructor stop the process (it force-unwraps the key as a string),
/// and aliases are expanded without limit when the tree becomes values ("billion laughs": a few hundred
/// bytes of nested aliases become gigabytes). The document is composed first (aliases shared, nothing
/// expanded), walked with a budget of nodes that counts every expansion, and only then made values.
/// Used for pipeline files, `--set` values, API key files and Markdown front matter (untrusted input).
package enum BoundedYAML {
    /// The most nodes a document may hold once its aliases are expanded: far above any pipeline file or
    /// front matter written by hand (a pipeline file has a few hundred).
    package static let maxNodes = 100_000

    /// The document's value (`[String: Any]`, `[Any]`, scalars as Yams resolves them), or nil for an empty
    /// document.
    /// - Throws: ``SluiceError/Code/configuration`` for YAML that does not parse, a mapping key that is a
    ///   list or a mapping, or a document past `maxNodes`.
    package static func load(_ text: String, maxNodes: Int = maxNodes) throws -> Any? {
        let root: Node?
        do {
            root = try Yams.compose(yaml: text)
        } catch {
            throw SluiceError(.configuration, "not valid YAML: \(error)")
        }
        guard let root else { return nil }
        try check(root, maxNodes: maxNodes)
        return root.any
    }

    /// Walks the tree without recursion, counting nodes (aliases count as many times as they are used).
    private static func check(_ root: Node, maxNodes: Int) throws {
        var pending = [root]
        var count = 0
        while let node = pending.popLast() {
            count += 1
            guard count <= maxNodes else {
                throw SluiceError(
                    .configuration,
                    "more than \(maxNodes) YAML nodes once its aliases are expanded (aliases nested to multiply a document are refused)"
                )
            }
            switch node {
            case .scalar, .alias:
                continue
            case .sequence(let sequence):
                pending.append(contentsOf: sequence)
            case .mapping(let mapping):
                for (key, value) in mapping {
                    guard case .scalar = key else {
                        throw SluiceError(
                            .configuration,
                            "a mapping key that is a list or a mapping (line \(key.mark?.line ?? 0)): keys must be plain values"
                        )
                    }
                    count += 1
                    pending.append(value)
                }
            }
        }
    }
}
