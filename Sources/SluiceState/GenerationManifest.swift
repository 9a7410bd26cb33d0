import Foundation
import SluiceCore

#if canImport(Glibc)
import Glibc
#endif

/// The index generations of one state folder (docs/GENERATIONS.md): the active generation every reader
/// uses, at most one candidate being built beside it, and the previous active one, kept for a rollback.
///
/// A generation is named `g<n>`; its settings are the pipeline file's with its `overrides` (`--set` lines,
/// `embed.*` and `chunk.*` only) applied, its document records are the checkpoint's table of that name
/// (``CheckpointStore``) and its vectors are in a store of its own. `g0` is the index as it was before
/// generations were used: the checkpoint's first table and the store at `sink.path` itself.
///
/// The file `generations.json` in the state folder is the one pointer every reader follows: it is written
/// beside and renamed over the old one (``save(stateDirectory:)``), so that a reader, or a process killed
/// at any point, sees the old manifest or the new one, never a mix. Every change is made under the state
/// lock.
package struct GenerationManifest: Codable, Sendable, Hashable {
    /// One generation: its name and what it changes in the pipeline file's settings.
    package struct Generation: Codable, Sendable, Hashable {
        /// `g0`, `g1`, …: never reused.
        package var id: String
        /// `key=value` settings applied after the pipeline file's (and before the command line's).
        package var overrides: [String]
        /// When it was started (seconds since 1970).
        package var createdAt: Double

        package init(id: String, overrides: [String] = [], createdAt: Double = Date().timeIntervalSince1970) {
            self.id = id
            self.overrides = overrides
            self.createdAt = createdAt
        }

        /// Whether it is the index made before generations (the checkpoint's first table, the store at
        /// `sink.path`).
        package var isOriginal: Bool { id == GenerationManifest.original }
    }

    /// The manifest's format.
    package var version = 1
    /// What every reader and every run uses.
    package var active: Generation
    /// Built beside the active one; kept current by every run until it is promoted or dropped.
    package var candidate: Generation?
    /// The generation active before the last promote (or rollback): untouched, for a rollback.
    package var previous: Generation?
    /// The number of the next generation started.
    package var next: Int
    /// The number of shards of a sharded deployment (`--shard K/N`: every shard's state links its
    /// `generations.json` to this one manifest, kept beside the store; docs/GENERATIONS.md, "Sharded
    /// deployments"); nil for one state. Absent from manifests written before it.
    package var shards: Int?
    /// The quality gate's last comparison of a candidate with the active generation (promoted or refused);
    /// nil before the first promote with a judged query file. Absent from manifests written before it.
    package var comparison: GenerationComparison?
    /// In a sharded deployment whose manifest is kept in its store: the version of the store's manifest
    /// record the change that made the candidate (a start, a rollback) wrote. A shard's part of the candidate
    /// counts only when its run began at this version or a later one: a part a run built under an earlier
    /// candidate of the same name (before a promote and a rollback) does not. Nil beside a local store, and
    /// in manifests written before it.
    package var partsSince: Int?
    /// When the active generation last changed (a promote or a rollback; seconds since 1970): a drop waits
    /// until ``followGrace`` after it, so that servers reading the generation switched away from have
    /// followed the switch before its store is deleted. Absent from manifests written before it.
    package var switchedAt: Double?
    /// How many changes (starts, promotes, rollbacks, drops, gate results) made it, counted by every change
    /// (``IndexGenerations`` saves each with one more): which of a state's manifest and the store's copy of
    /// one state's is the later (``isLater(than:)``). Absent from manifests written before it.
    package var changes: Int?

    /// How long after a switch a server is taken to have followed it (it looks once a second; a reader's state
    /// on Pinecone without a coordination store asks the index every fourth second) and finished
    /// the requests it began on the old generation.
    package static let followGrace: Double = 5

    /// The name of the index made before generations were used.
    package static let original = "g0"
    package static let fileName = "generations.json"

    /// A manifest for an index that had none: its index is the active `g0`.
    package init() {
        active = Generation(id: Self.original)
        next = 1
    }

    /// Whether this manifest was made by a later change than `other` (both of one index's generations): more
    /// changes counted, or, between manifests written before the count (or with the same count), a later
    /// generation started (``next``), then a later switch (``switchedAt``). A manifest is never later than
    /// itself, and two that differ only in what the order does not see are neither.
    package func isLater(than other: GenerationManifest) -> Bool {
        let mine = (changes ?? 0, next, switchedAt ?? 0)
        let theirs = (other.changes ?? 0, other.next, other.switchedAt ?? 0)
        return mine > theirs
    }

    /// Every generation it names, the active one first.
    package var all: [Generation] { [active] + [candidate, previous].compactMap { $0 } }

    /// The prefix of the only settings a generation may change: those that change the vectors.
    package static let overridablePrefixes = ["embed.", "chunk."]

    /// The manifest in `stateDirectory`, or nil when generations were never used there.
    /// - Throws: ``SluiceError/Code/stateCorrupt`` when the file exists and cannot be read.
    package static func load(stateDirectory: URL) throws -> GenerationManifest? {
        try load(from: stateDirectory.appendingPathComponent(fileName))
    }

    /// The manifest in the file `url` (a copy of a state's), or nil when there is none.
    /// - Throws: ``SluiceError/Code/stateCorrupt`` when the file exists and cannot be read.
    package static func load(from url: URL) throws -> GenerationManifest? {
        guard let data = FileManager.default.contents(atPath: url.path) else { return nil }
        do {
            return try JSONDecoder().decode(GenerationManifest.self, from: data)
        } catch {
            throw SluiceError(
                .stateCorrupt,
                "\(url.path) cannot be read (\(error)): restore it from a backup (it names the active generation)",
                cause: error
            )
        }
    }

    /// Writes the manifest beside the old one, flushes it, and renames it over the old one (then flushes the
    /// folder): the switch is one atomic rename. When `STATE/generations.json` is a symbolic link (a shard's
    /// state, linked to its deployment's one manifest), the file it links to is the one replaced, so every
    /// shard's state, and every reader of one, switches with the one rename.
    package func save(stateDirectory: URL) throws {
        try write(to: Self.followingLink(stateDirectory.appendingPathComponent(Self.fileName)))
    }

    /// Writes the manifest as the file `url`, as ``save(stateDirectory:)`` does: beside it, flushed, renamed
    /// over it. A copy (`crashPoints` false) passes none of the test crash points the manifest's own write does.
    package func write(to url: URL, crashPoints: Bool = true) throws {
        let folder = url.deletingLastPathComponent()
        let temporary = folder.appendingPathComponent(".\(url.lastPathComponent).tmp")
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let data = try encoder.encode(self)
        guard FileManager.default.createFile(atPath: temporary.path, contents: data) else {
            throw SluiceError(.io, "cannot write \(temporary.path)")
        }
        try Self.flush(temporary.path)
        if crashPoints { CrashPoint.reach("generations.manifest-written") }
        guard rename(temporary.path, url.path) == 0 else {
            throw SluiceError(.io, "cannot replace \(url.path): \(String(cString: strerror(errno)))")
        }
        try Self.flush(folder.path)
        if crashPoints { CrashPoint.reach("generations.manifest-renamed") }
    }

    /// `url`, or the file it links to when it is a symbolic link.
    package static func followingLink(_ url: URL) -> URL {
        guard let destination = try? FileManager.default.destinationOfSymbolicLink(atPath: url.path) else { return url }
        return URL(fileURLWithPath: destination, relativeTo: url.deletingLastPathComponent()).standardizedFileURL
    }

    private static func flush(_ path: String) throws {
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else {
            throw SluiceError(.io, "cannot open \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else {
            throw SluiceError(.io, "cannot flush \(path): \(String(cString: strerror(errno)))")
        }
    }
}
