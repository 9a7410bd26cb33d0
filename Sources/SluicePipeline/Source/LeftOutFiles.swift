import Synchronization

/// The files a walk passed over because include/exclude did not select them, and a few of their keys:
/// what a run and `sluice check` report, so that a pattern that leaves files out never does so silently.
/// Folders excluded whole (`…/**`) are not walked; they are counted as folders.
package final class LeftOutFiles: Sendable {
    private let state = Mutex((files: 0, folders: 0, examples: [String]()))

    /// How many example keys are kept.
    package static let examples = 5

    package init() {}

    func file(_ key: String) {
        state.withLock {
            $0.files += 1
            if $0.examples.count < Self.examples { $0.examples.append(key) }
        }
    }

    func folder(_ key: String) {
        state.withLock {
            $0.folders += 1
            if $0.examples.count < Self.examples { $0.examples.append(key + "/") }
        }
    }

    package var files: Int { state.withLock { $0.files } }
    package var folders: Int { state.withLock { $0.folders } }
    package var exampleKeys: [String] { state.withLock { $0.examples } }

    /// `3 files and 1 folder (e.g. README, Makefile, .git/)`, or nil when nothing was left out.
    package var summary: String? {
        let (files, folders, examples) = state.withLock { ($0.files, $0.folders, $0.examples) }
        guard files + folders > 0 else { return nil }
        var parts: [String] = []
        if files > 0 { parts.append("\(files) file\(files == 1 ? "" : "s")") }
        if folders > 0 { parts.append("\(folders) folder\(folders == 1 ? "" : "s")") }
        return parts.joined(separator: " and ") + " (e.g. " + examples.joined(separator: ", ") + ")"
    }
}
