import Foundation

/// A test's own folder under the system's temporary directory, removed when the test is done, so that a
/// full test run leaves nothing behind in `/tmp`.
///
/// Make it with ``make(_:)`` and remove it in a `defer` right after (or let ``with(_:_:)`` do both); a type
/// that holds one (a harness, a workspace) removes it in its own clean-up. Everything a test writes goes
/// inside its folder, so removing the folder removes it all. With `SLUICE_KEEP_TEST_DIRS` set, folders are
/// kept for debugging and named on standard output.
public enum TemporaryDirectory {
    /// Creates a new empty folder named `<label>-<random>` under the temporary directory; the caller
    /// removes it with ``remove(_:)``.
    /// - Returns: The folder's URL, symbolic links resolved.
    /// - Throws: When the folder cannot be created.
    public static func make(_ label: String = "sluice-test") throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "\(label)-\(UInt64.random(in: 0...UInt64.max))"
        )
        .resolvingSymlinksInPath()
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// Removes `url` and everything in it (kept when `SLUICE_KEEP_TEST_DIRS` is set). A removal that fails
    /// because something is still writing inside (a child process that has not ended yet) is tried again a
    /// few times.
    public static func remove(_ url: URL) {
        if ProcessInfo.processInfo.environment["SLUICE_KEEP_TEST_DIRS"] != nil {
            print("kept \(url.path)")
            return
        }
        for _ in 0..<5 {
            do {
                try FileManager.default.removeItem(at: url)
                return
            } catch {
                guard FileManager.default.fileExists(atPath: url.path) else { return }
                Thread.sleep(forTimeInterval: 0.1)
            }
        }
    }

    /// Calls `body` with a new empty folder (``make(_:)``) and removes it when `body` returns or throws.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws, or the error of creating the folder.
    public static func with<Result>(_ label: String, _ body: (URL) throws -> Result) throws -> Result {
        let url = try make(label)
        defer { remove(url) }
        return try body(url)
    }
}
