import Foundation
import Yams

/// YAML loaded as `Yams.load` loads it, but bounded and without its traps: a mapping key that is not a
/// scalar (`? [a, b]`) makes Yams' constructor stop the process (it force-unwraps the key as a string),
/// and aliases are expanded without limit when the tree becomes values ("billion laughs": a few hundred
/// bytes of nested aliases become gigabytes). The document is composed first (aliases shared, nothing
/// expanded), walked with a budget of nodes that counts every expansion, and only then made values.
/// Used for pipeline files, `--set` values, API key files and Markdown front matter (untrusted input).
/// A timestamp that names no moment of the calendar (`2026-02-30`, `2026-13-01T25:00:00Z`), which Yams
/// rolls over into another date, stays the text it is.
package enum BoundedYAML {
    /// The most nodes a document may hold once its aliases are expanded: far above any pipeline file or
    /// front matter written by hand (a pipeline file has a few hundred).
    package static let maxNodes = 100_000

    /// The document's value (`[String: Any]`, `[Any]`, scalars as Yams resolves them), or nil for an empty
    /// document.
    /// - Throws: ``SluiceError/Code/configuration`` for YAML that does not parse, a mapping key that is a
    ///   list or a mapping, or a document past `maxNodes`.
    /// - Parameter quoting: whether an error may quote the document's lines (a pipeline file's may; a keys
    ///   file's may not: its lines hold digests, and a key pasted by mistake).
    package static func load(_ text: String, maxNodes: Int = maxNodes, quoting: Bool = true) throws -> Any? {
        let root: Node?
        do {
            root = try Yams.compose(yaml: text, .default, constructor)
        } catch {
            let description = quoting ? "\(error)" : (error as? YamlError).map(unquoted) ?? "cannot be parsed"
            throw SluiceError(.configuration, "not valid YAML: \(description)")
        }
        guard let root else { return nil }
        try check(root, maxNodes: maxNodes)
        return root.any
    }

    /// Where and what, without the document's text (Yams' own description quotes the line).
    static func unquoted(_ error: YamlError) -> String {
        func at(_ mark: Mark, _ context: YamlError.Context?, _ problem: String) -> String {
            "line \(mark.line), column \(mark.column): " + (context.map { "\($0.text): " } ?? "") + problem
        }
        switch error {
        case .scanner(let context, let problem, let mark, _), .parser(let context, let problem, let mark, _),
            .composer(let context, let problem, let mark, _):
            return at(mark, context, problem)
        case .reader(let problem, let offset, _, _): return "\(problem)" + (offset.map { " at byte \($0)" } ?? "")
        case .duplicatedKeysInMapping(_, let context): return at(context.mark, nil, "a key written twice")
        default: return "cannot be parsed"
        }
    }

    /// Yams' constructor, but for timestamps: only a calendar's date is a date.
    nonisolated(unsafe) private static let constructor: Constructor = {
        var scalars = Constructor.defaultScalarMap
        scalars[.timestamp] = { scalar in
            isCalendarTimestamp(scalar.string) ? Date.construct(from: scalar) : nil  // nil: the text
        }
        return Constructor(scalars)
    }()

    /// Whether the fields of a YAML timestamp (`2026-02-28`, `2026-02-28T10:00:00.5+01:00`) are in range:
    /// a month of the year, a day of that month, an hour of the day, a minute, a second (60: a leap second).
    static func isCalendarTimestamp(_ text: String) -> Bool {
        let numbers = text.split(whereSeparator: { !$0.isASCII || !$0.isNumber }).prefix(6).map { Int($0) ?? -1 }
        guard numbers.count >= 3 else { return false }
        let (year, month, day) = (numbers[0], numbers[1], numbers[2])
        guard (1...12).contains(month), day >= 1 else { return false }
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
        guard day <= days else { return false }
        guard numbers.count >= 6 else { return true }
        return (0...23).contains(numbers[3]) && (0...59).contains(numbers[4]) && (0...60).contains(numbers[5])
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
