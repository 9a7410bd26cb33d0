import Foundation
import SluiceCore

#if canImport(Glibc)
import Glibc
#endif

/// Walks the source folder and yields its files in a stable (sorted) order.
///
/// Symbolic links are not followed unless configured; when they are, a link that leaves the root or
/// loops back into a folder already being walked is reported as skipped, never followed.
package struct SourceScanner: Sendable {
    package let root: URL
    package let include: [GlobPattern]
    package let exclude: [GlobPattern]
    package let followSymlinks: Bool
    /// The part of the corpus this run owns (docs/DESIGN.md §8); documents of other shards are not seen at all.
    package let shard: Shard
    /// What the walks passed over (include/exclude), for the run's report and `sluice check`.
    package var leftOut = LeftOutFiles()

    /// A file that could not be listed (unreadable folder, dangling or escaping link), reported per key.
    package typealias Problem = SourceProblem

    package init(configuration: PipelineConfiguration.Source, root: URL, shard: Shard = .whole) {
        self.root = root.standardizedFileURL.resolvingSymlinksInPath()
        self.include = configuration.include.map(GlobPattern.init)
        self.exclude = configuration.exclude.map(GlobPattern.init)
        self.followSymlinks = configuration.followSymlinks
        self.shard = shard
    }

    /// Whether a key is part of the source by the include/exclude rules, and of this run's shard.
    package func selects(_ key: String) -> Bool {
        include.contains { $0.matches(key) } && !exclude.contains { $0.matches(key) } && shard.owns(key)
    }

    /// Walks the tree depth-first in sorted order, calling `body` for each selected regular file or problem.
    /// `body` returns false to stop early.
    nonisolated(nonsending) package func walk(_ body: (Result<SourceFile, Problem>) async -> Bool) async throws {
        var info = stat()
        guard stat(root.path, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else {
            throw SluiceError(.configuration, "source folder \(root.path) does not exist or is not a folder")
        }
        var visited: Set<String> = [root.path]
        _ = try await walk(directory: root, prefix: "", visited: &visited, body)
    }

    nonisolated(nonsending) private func walk(
        directory: URL,
        prefix: String,
        visited: inout Set<String>,
        _ body: (Result<SourceFile, Problem>) async -> Bool
    ) async throws -> Bool {
        let entries: [Entry]
        do {
            entries = try Self.entries(of: directory)
        } catch {
            if prefix.isEmpty {
                throw SluiceError(.unreadable, "cannot list source folder \(directory.path)", cause: error)
            }
            guard shard.owns(prefix) else { return true }  // one shard reports the folder
            return await body(
                .failure(
                    Problem(
                        key: prefix,
                        error: .unreadable,
                        message: "cannot list folder: permission denied or unreadable"
                    )
                )
            )
        }
        for entry in entries {
            guard let name = entry.name else {
                // Not UTF-8 (a Latin-1 archive): keys travel to every store as UTF-8 text, so the file
                // fails with its name escaped (`caf\xE9.txt`) rather than vanish; a folder fails once.
                let key = prefix.isEmpty ? entry.shown : "\(prefix)/\(entry.shown)"
                var info = stat()
                let isFolder = Self.lstatBytes(entry.path, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR
                guard isFolder ? shard.owns(key) : selects(key) else { continue }
                let message =
                    isFolder
                    ? "the folder name is not valid UTF-8 (its bytes are shown as \\xHH): its files are not indexed; rename it"
                    : "the file name is not valid UTF-8 (its bytes are shown as \\xHH); rename it to index it"
                if await !body(.failure(Problem(key: key, error: .invalidEncoding, message: message))) { return false }
                continue
            }
            let key = prefix.isEmpty ? name : "\(prefix)/\(name)"
            let url = directory.appendingPathComponent(name)
            var info = stat()
            guard lstat(url.path, &info) == 0 else { continue }
            var kind = info.st_mode & S_IFMT
            let isLink = kind == S_IFLNK
            if isLink {
                guard followSymlinks else { continue }
                let target = url.resolvingSymlinksInPath().standardizedFileURL
                guard target.path == root.path || target.path.hasPrefix(root.path + "/") else {
                    if selects(key) {
                        if await !body(
                            .failure(
                                Problem(
                                    key: key,
                                    error: .unreadable,
                                    message: "symbolic link points outside the source root; not followed"
                                )
                            )
                        ) {
                            return false
                        }
                    }
                    continue
                }
                guard stat(url.path, &info) == 0 else {
                    if selects(key) {
                        if await !body(
                            .failure(
                                Problem(key: key, error: .unreadable, message: "dangling or looping symbolic link")
                            )
                        ) {
                            return false
                        }
                    }
                    continue
                }
                kind = info.st_mode & S_IFMT
                if kind == S_IFDIR {
                    if visited.contains(target.path) { continue }  // a loop: already being walked
                    visited.insert(target.path)
                    defer { visited.remove(target.path) }
                    if try await !walk(directory: target, prefix: key, visited: &visited, body) { return false }
                    continue
                }
            }
            if kind == S_IFDIR {
                // A folder excluded as a whole (`…/**`) is not even walked.
                if exclude.contains(where: { $0.pattern.hasSuffix("/**") && $0.matches(key + "/\u{1}") }) {
                    if shard.owns(key) { leftOut.folder(key) }
                    continue
                }
                visited.insert(url.path)
                if try await !walk(directory: url, prefix: key, visited: &visited, body) { return false }
                visited.remove(url.path)
                continue
            }
            guard kind == S_IFREG else { continue }
            guard selects(key) else {
                if shard.owns(key) {
                    leftOut.file(key)
                    // Not selected by include, and not named by exclude (left out on purpose): could Sluice
                    // read it? For the hint, and `check`'s warning.
                    if !include.contains(where: { $0.matches(key) }), !exclude.contains(where: { $0.matches(key) }),
                        leftOut.takesSniff(),
                        ReadableContent.looksReadable(url)
                    {
                        leftOut.readable(key)
                    }
                }
                continue
            }
            let mtime = Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
            var file = SourceFile(key: key, url: url, size: Int(info.st_size), mtimeNanoseconds: mtime)
            file.identity = FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
            file.followsSymlink = isLink
            if await !body(.success(file)) { return false }
        }
        return true
    }

    /// Whether the walk would still list `key` (prune asks, before the walk): selected, each folder on the
    /// way a folder, the last component a regular file, with links treated as the walk treats them (or a
    /// name that is not UTF-8, which the walk reports as failed under the same escaped key). With
    /// `lstat`, not `stat`: a document replaced by a symbolic link is gone unless links are followed (and
    /// then only a link that stays inside the root), so its old text does not stay in the index.
    package func lists(_ key: String) -> Bool {
        switch listing(of: key) {
        case .file?, .misnamedFile?: selects(key)
        case .misnamedFolder?: shard.owns(key)  // reported once, as the walk does
        case nil: false
        }
    }

    /// How the walk lists a key: a file, or (failed) a file or folder whose name is not UTF-8.
    enum Listing { case file, misnamedFile, misnamedFolder }

    private func listing(of key: String) -> Listing? {
        let parts = key.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        guard !parts.isEmpty else { return nil }
        var folder = root
        for (index, part) in parts.enumerated() {
            let url = folder.appendingPathComponent(part)
            var info = stat()
            guard lstat(url.path, &info) == 0 else {
                // A name that is not UTF-8 is listed (as a failure) under its escaped form.
                guard let entry = (try? Self.entries(of: folder))?.first(where: { $0.name == nil && $0.shown == part })
                else { return nil }
                var entryInfo = stat()
                let isFolder = Self.lstatBytes(entry.path, &entryInfo) == 0 && entryInfo.st_mode & S_IFMT == S_IFDIR
                return isFolder ? .misnamedFolder : .misnamedFile
            }
            var resolved = url
            if info.st_mode & S_IFMT == S_IFLNK {
                let target = url.resolvingSymlinksInPath().standardizedFileURL
                guard followSymlinks, target.path == root.path || target.path.hasPrefix(root.path + "/"),
                    stat(url.path, &info) == 0
                else { return nil }
                resolved = target
            }
            let kind = info.st_mode & S_IFMT
            if index == parts.count - 1 { return kind == S_IFREG ? .file : nil }
            guard kind == S_IFDIR else { return nil }
            folder = resolved
        }
        return nil
    }

    /// One name of a folder, as the file system holds it.
    struct Entry {
        /// The name, when it is UTF-8.
        var name: String?
        /// The name for display and as a key, non-UTF-8 bytes escaped (``DisplayEscaping``).
        var shown: String
        /// The entry's full path, as bytes.
        var path: [UInt8]
    }

    /// The names in `directory` (not `.` and `..`), sorted by how they are shown. `readdir`, not
    /// FileManager: FileManager drops names that are not UTF-8 without a word.
    static func entries(of directory: URL) throws -> [Entry] {
        guard let stream = opendir(directory.path) else {
            throw SluiceError(.unreadable, "cannot list folder: \(String(cString: strerror(errno)))")
        }
        defer { closedir(stream) }
        let base = Array(directory.path.utf8) + [UInt8(ascii: "/")]
        var out: [Entry] = []
        while let entry = readdir(stream) {
            let bytes = withUnsafeBytes(of: entry.pointee.d_name) { raw in Array(raw.prefix { $0 != 0 }) }
            if bytes == [0x2E] || bytes == [0x2E, 0x2E] { continue }
            let name = String(validating: bytes, as: UTF8.self)
            out.append(Entry(name: name, shown: name ?? DisplayEscaping.escaped(bytes: bytes), path: base + bytes))
        }
        return out.sorted { $0.shown < $1.shown }
    }

    static func lstatBytes(_ path: [UInt8], _ info: inout stat) -> Int32 {
        (path + [0]).withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { Glibc.lstat($0.baseAddress!, &info) }
        }
    }
}
