import Synchronization

/// The files a walk passed over because include/exclude did not select them, and a few of their keys:
/// what a run and `sluice check` report, so that a pattern that leaves files out never does so silently.
/// Folders excluded whole (`…/**`) are not walked; they are counted as folders.
///
/// Files that `source.include` did not select (rather than `exclude` left out) are sniffed
/// (``ReadableContent``): those Sluice could read are counted, with the include patterns that would take
/// them in (`"**/*.Debian"`), so that the report says how to take them in.
package final class LeftOutFiles: Sendable {
    private struct State {
        var files = 0
        var folders = 0
        var examples: [String] = []
        var sniffed = 0
        var readable = 0
        /// A few of the readable ones' keys (at most ``LeftOutFiles/examples``).
        var readableExamples: [String] = []
        /// The patterns that take the readable ones in, in the order met (at most ``LeftOutFiles/examples``).
        var patterns: [String] = []
    }

    private let state = Mutex(State())

    /// How many example keys (and patterns) are kept.
    package static let examples = 5
    /// How many left-out files a walk sniffs at most (the first 4 KiB of each).
    package static let sniffLimit = 1000

    package init() {}

    func file(_ key: String) {
        state.withLock {
            $0.files += 1
            if $0.examples.count < Self.examples { $0.examples.append(key) }
        }
    }

    /// Whether a file `include` did not select should be sniffed (under ``sniffLimit``); counts it as sniffed.
    func takesSniff() -> Bool {
        state.withLock {
            guard $0.sniffed < Self.sniffLimit else { return false }
            $0.sniffed += 1
            return true
        }
    }

    /// A left-out file Sluice could read: counted, with the include pattern that takes it in.
    func readable(_ key: String) {
        let pattern = Self.pattern(for: key)
        state.withLock {
            $0.readable += 1
            if $0.readableExamples.count < Self.examples { $0.readableExamples.append(key) }
            if !$0.patterns.contains(pattern), $0.patterns.count < Self.examples { $0.patterns.append(pattern) }
        }
    }

    /// `**/*.Debian` for `doc/README.Debian`; `**/!(*.*)` for a name without an extension; the name itself
    /// for a dot file.
    static func pattern(for key: String) -> String {
        let name = key.split(separator: "/").last.map(String.init) ?? key
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else {
            return name.hasPrefix(".") ? "**/\(name)" : "**/!(*.*)"
        }
        return "**/*" + name[dot...]
    }

    package var readableFiles: Int { state.withLock { $0.readable } }
    /// A few of the readable left-out files' keys.
    package var readableExampleKeys: [String] { state.withLock { $0.readableExamples } }
    /// The include patterns that take the readable left-out files in (`"**/*.Debian"`), in the order met.
    package var includePatterns: [String] { state.withLock { $0.patterns } }

    func folder(_ key: String) {
        state.withLock {
            $0.folders += 1
            if $0.examples.count < Self.examples { $0.examples.append(key + "/") }
        }
    }

    package var files: Int { state.withLock { $0.files } }
    package var folders: Int { state.withLock { $0.folders } }
    package var exampleKeys: [String] { state.withLock { $0.examples } }

    /// `3 files and 1 folder (e.g. README, Makefile, .git/)`, then, when some of them could be read, `; 2 of
    /// them look readable (text, PDF or images): add "**/*.Debian", "**/*.changelog" to source.include to
    /// take them in`; nil when nothing was left out.
    package var summary: String? {
        guard var summary = overview else { return nil }
        let current = state.withLock { $0 }
        if current.readable > 0 {
            summary +=
                "; \(current.readable) of them look readable (text, PDF or images): add \(quotedPatterns) to source.include to take them in"
        }
        return summary
    }

    /// `3 files and 1 folder (e.g. README, Makefile, .git/)`: the count and a few keys, without the hint;
    /// nil when nothing was left out.
    package var overview: String? {
        let current = state.withLock { $0 }
        guard current.files + current.folders > 0 else { return nil }
        var parts: [String] = []
        if current.files > 0 { parts.append("\(current.files) file\(current.files == 1 ? "" : "s")") }
        if current.folders > 0 { parts.append("\(current.folders) folder\(current.folders == 1 ? "" : "s")") }
        return parts.joined(separator: " and ") + " (e.g. " + current.examples.joined(separator: ", ") + ")"
    }

    /// `"**/*.Debian", "**/*.changelog"`.
    package var quotedPatterns: String { includePatterns.map { "\"\($0)\"" }.joined(separator: ", ") }
}
