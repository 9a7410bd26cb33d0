import Foundation
import SluiceCore

#if canImport(Glibc)
// ZIPFoundation (a dependency of SluiceExtract) imports CoreFoundation, whose clang module then owns
// `struct stat`; MemberImportVisibility wants that module imported where its fields are read.
import CoreFoundation
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

    /// A file that could not be listed (unreadable folder, dangling or escaping link), reported per key.
    package struct Problem: Error, Sendable, Hashable {
        package var key: String
        package var error: SluiceError.Code
        package var message: String
    }

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
        directory: URL, prefix: String, visited: inout Set<String>,
        _ body: (Result<SourceFile, Problem>) async -> Bool
    ) async throws -> Bool {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        } catch {
            if prefix.isEmpty { throw SluiceError(.unreadable, "cannot list source folder \(directory.path)", cause: error) }
            guard shard.owns(prefix) else { return true }  // one shard reports the folder
            return await body(.failure(Problem(key: prefix, error: .unreadable, message: "cannot list folder: permission denied or unreadable")))
        }
        for name in names {
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
                        if await !body(.failure(Problem(key: key, error: .unreadable, message: "symbolic link points outside the source root; not followed"))) { return false }
                    }
                    continue
                }
                guard stat(url.path, &info) == 0 else {
                    if selects(key) {
                        if await !body(.failure(Problem(key: key, error: .unreadable, message: "dangling or looping symbolic link"))) { return false }
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
                    continue
                }
                visited.insert(url.path)
                if try await !walk(directory: url, prefix: key, visited: &visited, body) { return false }
                visited.remove(url.path)
                continue
            }
            guard kind == S_IFREG, selects(key) else { continue }
            let mtime = Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
            var file = SourceFile(key: key, url: url, size: Int(info.st_size), mtimeNanoseconds: mtime)
            file.identity = FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
            file.followsSymlink = isLink
            if await !body(.success(file)) { return false }
        }
        return true
    }

    /// Whether the walk would still list `key` as a file (prune asks, before the walk): each folder on the
    /// way a folder, the last component a regular file, with links treated as the walk treats them. With
    /// `lstat`, not `stat`: a document replaced by a symbolic link is gone unless links are followed (and
    /// then only a link that stays inside the root), so its old text does not stay in the index.
    package func lists(_ key: String) -> Bool {
        let parts = key.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        guard !parts.isEmpty else { return false }
        var folder = root
        for (index, part) in parts.enumerated() {
            let url = folder.appendingPathComponent(part)
            var info = stat()
            guard lstat(url.path, &info) == 0 else { return false }
            var resolved = url
            if info.st_mode & S_IFMT == S_IFLNK {
                let target = url.resolvingSymlinksInPath().standardizedFileURL
                guard followSymlinks, target.path == root.path || target.path.hasPrefix(root.path + "/"),
                    stat(url.path, &info) == 0
                else { return false }
                resolved = target
            }
            let kind = info.st_mode & S_IFMT
            if index == parts.count - 1 { return kind == S_IFREG }
            guard kind == S_IFDIR else { return false }
            folder = resolved
        }
        return false
    }
}
