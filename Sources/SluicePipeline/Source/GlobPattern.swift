#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A path glob: `*`, `?` and `[…]` within one path segment (fnmatch), `**` for any number of segments,
/// and fnmatch's extended patterns within a segment (`!(*.*)`: a name without a dot, `@(a|b)`, `+(…)`).
/// Matched against document keys (paths relative to the source root, `/`-separated).
package struct GlobPattern: Sendable, Hashable {
    package let pattern: String
    private let segments: [String]

    package init(_ pattern: String) {
        self.pattern = pattern
        var trimmed = pattern
        while trimmed.hasPrefix("./") { trimmed.removeFirst(2) }
        segments = trimmed.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
    }

    /// glibc's `FNM_EXTMATCH` (a GNU extension the Swift overlay does not import; other C libraries have
    /// no extended patterns, and their bit 5 means something else).
    #if canImport(Glibc)
    private static let extendedMatching: Int32 = 1 << 5
    #else
    private static let extendedMatching: Int32 = 0
    #endif

    package func matches(_ path: String) -> Bool {
        let parts = path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        var memo = [Int: Bool]()
        return match(0, parts, 0, &memo)
    }

    private func match(_ si: Int, _ parts: [String], _ pi: Int, _ memo: inout [Int: Bool]) -> Bool {
        let key = si * (parts.count + 1) + pi
        if let known = memo[key] { return known }
        let result: Bool
        if si == segments.count {
            result = pi == parts.count
        } else if segments[si] == "**" {
            // Zero segments, or consume one and stay on `**`.
            result = match(si + 1, parts, pi, &memo) || (pi < parts.count && match(si, parts, pi + 1, &memo))
        } else if pi < parts.count && fnmatch(segments[si], parts[pi], Self.extendedMatching) == 0 {
            result = match(si + 1, parts, pi + 1, &memo)
        } else {
            result = false
        }
        memo[key] = result
        return result
    }
}
