import Foundation
import SluiceCore
import SluiceState

#if canImport(Glibc)
import Glibc
#endif

/// The names of a JSONL store's generations, and the symbolic link outside readers follow
/// (docs/GENERATIONS.md, "How it is stored"): `sink.path` `out.jsonl` is generation `g0`, `out_g1.jsonl` is
/// `g1`, and `out_active.jsonl` links to the active one; a folder of shards `out` likewise (`out_g1`,
/// `out_active`).
///
/// The link is replaced as a file is (``publish(_:to:)``): a new link beside it, renamed over it with
/// rename(2), which is atomic: a reader opening the link finds the old generation's file or the new one's.
/// (Foundation's `replaceItemAt` is not used: on Linux it fails when the target is missing.)
enum JSONLGenerationLink {
    /// `path` with `_<label>` before its `.jsonl` extension (a file) or at its end (a folder); `g0` is
    /// `path` itself.
    static func adding(_ label: String, to path: String) -> String {
        guard label != GenerationManifest.original else { return path }
        let trimmed = trimmingSlashes(path)
        guard trimmed.hasSuffix(".jsonl") else { return trimmed + "_" + label }
        return String(trimmed.dropLast(".jsonl".count)) + "_" + label + ".jsonl"
    }

    /// `path` without `suffix` (`_gN`) before its `.jsonl` extension or at its end: the original
    /// generation's path of a generation's.
    static func removing(_ suffix: String, from path: String) -> String {
        let trimmed = trimmingSlashes(path)
        let isFile = trimmed.hasSuffix(".jsonl")
        let stem = isFile ? String(trimmed.dropLast(".jsonl".count)) : trimmed
        guard stem.hasSuffix(suffix) else { return path }
        return String(stem.dropLast(suffix.count)) + (isFile ? ".jsonl" : "")
    }

    private static func trimmingSlashes(_ path: String) -> String {
        var trimmed = path
        while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed.removeLast() }
        return trimmed
    }

    /// The bytes of the generation's files at `path`: the folder's, or the file's with its journal and
    /// settings file.
    static func bytes(of path: URL) -> Int {
        guard path.pathExtension == "jsonl" else { return IndexGenerations.bytes(of: path, skipping: nil) }
        return [path.path, path.path + ".journal", path.path + ".meta.json"].reduce(0) { total, file in
            total + (((try? FileManager.default.attributesOfItem(atPath: file)[.size]) as? NSNumber)?.intValue ?? 0)
        }
    }

    /// Makes `link` a symbolic link to `target` (a sibling: the link holds its name), unless it is one
    /// already; nothing while `target` does not exist yet (before the generation's first run wrote it).
    /// - Throws: ``SluiceError/Code/configuration`` when `link` exists and is not a symbolic link (it is never
    ///   replaced); ``SluiceError/Code/io`` when the link cannot be written.
    static func publish(_ link: URL, to target: URL) throws {
        var info = stat()
        if lstat(link.path, &info) == 0, info.st_mode & S_IFMT != S_IFLNK {
            throw SluiceError(
                .configuration,
                "\(link.path) exists and is not a symbolic link: it is the name outside readers follow to the active generation (docs/GENERATIONS.md); move it away"
            )
        }
        guard FileManager.default.fileExists(atPath: target.path) else { return }
        let name = target.lastPathComponent
        if let current = try? FileManager.default.destinationOfSymbolicLink(atPath: link.path), current == name {
            return
        }
        let temporary = link.deletingLastPathComponent().appendingPathComponent(".\(link.lastPathComponent).tmp")
        _ = unlink(temporary.path)
        guard symlink(name, temporary.path) == 0 else {
            throw SluiceError(.io, "cannot write the link \(temporary.path): \(String(cString: strerror(errno)))")
        }
        CrashPoint.reach("generations.link-written")
        guard rename(temporary.path, link.path) == 0 else {
            throw SluiceError(.io, "cannot replace \(link.path): \(String(cString: strerror(errno)))")
        }
        // The rename made durable (as the manifest's is).
        let folder = open(link.deletingLastPathComponent().path, O_RDONLY)
        if folder >= 0 {
            _ = fsync(folder)
            close(folder)
        }
    }
}
