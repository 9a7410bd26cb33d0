import Foundation
import SluiceCore
import SluiceState

#if canImport(Glibc)
import Glibc
#endif

/// The index generations of a sharded deployment (`--shard K/N`, a state per shard, one store;
/// docs/GENERATIONS.md, "Sharded deployments"): one manifest for all shards, kept beside the store, and each
/// shard's part of the candidate.
///
/// - The manifest is `<store>/generations/shared/generations.json`; every shard's `STATE/generations.json`
///   is a symbolic link to it (made by `generation start` for the state it runs with, and by each other
///   shard's first run after it), so every reader of any shard's state follows one file, and a promote is one
///   rename of it (``GenerationManifest/save(stateDirectory:)`` writes through the link).
/// - Each shard's run takes the folder's lock shared while it runs; a change (start, promote, rollback, drop)
///   takes it exclusively: a promote never sees a shard half-way through its run.
/// - A shard's part of the candidate is the file `parts/<candidate>/<K>-of-<N>.json`: written as incomplete
///   before the shard's run touches either generation, and as complete only after its run of the candidate
///   ended with its document records complete (every document of its active generation indexed in the
///   candidate from the same bytes, no other, no write pending). A run killed at any point leaves its part
///   incomplete. Promote switches only when all N parts are complete; every change deletes the parts (they
///   describe the generations as they were before it).
struct ShardedGenerations: Sendable {
    /// `<store>/generations/shared`.
    let directory: URL

    init(baseStore: URL) {
        directory = baseStore.appendingPathComponent("generations").appendingPathComponent("shared")
    }

    var manifestURL: URL { directory.appendingPathComponent(GenerationManifest.fileName) }

    /// Whether `stateDirectory`'s manifest is a link to a deployment's one manifest.
    static func isLinked(_ stateDirectory: URL) -> Bool {
        let path = stateDirectory.appendingPathComponent(GenerationManifest.fileName).path
        return (try? FileManager.default.destinationOfSymbolicLink(atPath: path)) != nil
    }

    /// Links `stateDirectory`'s `generations.json` to the deployment's manifest (a new link renamed into
    /// place), unless it is linked already.
    /// - Throws: ``SluiceError/Code/configuration`` when the state has a manifest of its own (its generations
    ///   are not the deployment's); ``SluiceError/Code/io`` when the link cannot be written.
    func link(_ stateDirectory: URL) throws {
        guard !Self.isLinked(stateDirectory) else { return }
        let name = stateDirectory.appendingPathComponent(GenerationManifest.fileName)
        if FileManager.default.fileExists(atPath: name.path) {
            throw SluiceError(
                .configuration,
                "\(name.path) is a manifest of its own, but the store's shards share \(manifestURL.path): this state's generations are not the deployment's (docs/GENERATIONS.md, \"Sharded deployments\")"
            )
        }
        try FileManager.default.createDirectory(at: stateDirectory, withIntermediateDirectories: true)
        let temporary = stateDirectory.appendingPathComponent(".\(GenerationManifest.fileName).link")
        _ = unlink(temporary.path)
        guard symlink(manifestURL.path, temporary.path) == 0, rename(temporary.path, name.path) == 0 else {
            throw SluiceError(.io, "cannot link \(name.path): \(String(cString: strerror(errno)))")
        }
    }

    /// Makes `manifest` the deployment's one manifest: written under a name of this process's and flushed,
    /// then linked to the manifest's name, which link(2) refuses when it exists (another shard's run, or a
    /// `generation start`, made it first: theirs is kept), or, `replacing` an older one, renamed over it (the
    /// shards' states follow it through their links) with the older one's parts deleted.
    /// - Throws: ``SluiceError/Code/io`` when it cannot be written.
    func place(_ manifest: GenerationManifest, replacing: Bool) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let written = directory.appendingPathComponent(".\(GenerationManifest.fileName).\(getpid()).new")
        try manifest.write(to: written, crashPoints: false)
        defer { _ = unlink(written.path) }
        let placed =
            replacing
            ? rename(written.path, manifestURL.path) == 0
            : Glibc.link(written.path, manifestURL.path) == 0 || errno == EEXIST
        guard placed else {
            throw SluiceError(.io, "cannot write \(manifestURL.path): \(String(cString: strerror(errno)))")
        }
        // The folder flushed too, so that a power cut does not undo the rename (or the link) before the parts go.
        let folder = open(directory.path, O_RDONLY)
        guard folder >= 0, fsync(folder) == 0 else {
            if folder >= 0 { close(folder) }
            throw SluiceError(.io, "cannot flush \(directory.path): \(String(cString: strerror(errno)))")
        }
        close(folder)
        if replacing { try removeParts() }
    }

    /// A shard's part of a candidate.
    struct Part: Codable, Sendable, Hashable {
        var complete: Bool
        var missing = 0
        var extra = 0
        var pending = 0
        /// The candidate's documents in the shard's state (indexed) and their vectors; nil in a part written
        /// before its run ended (or by a release before these counts).
        var documents: Int?
        var vectors: Int?
        var at = Date().timeIntervalSince1970
        /// For a deployment whose manifest is kept in its store: the version of the manifest record the
        /// shard's run read before it began (``GenerationManifest/partsSince``); nil beside a local store.
        var version: Int?
    }

    func partURL(_ candidate: String, _ shard: Shard) -> URL {
        directory.appendingPathComponent("parts").appendingPathComponent(candidate)
            .appendingPathComponent("\(shard.index)-of-\(shard.count).json")
    }

    /// Writes a shard's part (beside, flushed, renamed over the old one).
    func write(_ part: Part, of candidate: String, shard: Shard) throws {
        let url = partURL(candidate, shard)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        let temporary = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).tmp")
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let data = try encoder.encode(part)
        let fd = open(temporary.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            throw SluiceError(.io, "cannot write \(temporary.path): \(String(cString: strerror(errno)))")
        }
        let written = data.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        let flushed = fsync(fd) == 0
        close(fd)
        guard written == data.count, flushed, rename(temporary.path, url.path) == 0 else {
            throw SluiceError(.io, "cannot write \(url.path): \(String(cString: strerror(errno)))")
        }
    }

    /// Deletes every part (after a change: they describe the generations as they were before it).
    func removeParts() throws {
        let parts = directory.appendingPathComponent("parts")
        if FileManager.default.fileExists(atPath: parts.path) { try FileManager.default.removeItem(at: parts) }
    }
}
