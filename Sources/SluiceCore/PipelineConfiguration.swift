import Foundation

/// Everything a run needs, as read from a pipeline file.
///
/// Each section is a nested type in its own file with its decoding beside it
/// (`PipelineConfiguration+Source.swift`, `+Extract`, `+Chunk`, `+Embed`, `+Sink`, `+Run`, `+Answer`, `+Serve`,
/// `+Search`, `+Eval`, `+Access`); loading a
/// file is in `PipelineConfiguration+Decoding.swift`, and every key is in docs/CONFIGURATION.md.
public struct PipelineConfiguration: Sendable, Hashable {
    public var source = Source()
    public var extract = Extract()
    public var chunk = Chunk()
    public var embed = Embed()
    public var sink = Sink()
    public var run = Run()
    /// What `sluice ask` calls (not used by `run`).
    public var answer = Answer()
    public var serve = Serve()
    /// How queries are answered beyond the store's ranking (`search.fusion`, `search.rerank`).
    public var search = Search()
    /// What `sluice eval` reads (not used by `run`).
    public var eval = Eval()
    /// Who may read each record (`access`, docs/ACCESS.md); off unless `access.enabled`.
    public var access = Access()
    /// Where a sharded deployment's generation manifest is kept when the store cannot keep it
    /// (`generations.coordination`, docs/GENERATIONS.md).
    public var generations = Generations()
    /// Folder of the LMDB checkpoint.
    public var state: String = ".sluice/state"
    /// The file the configuration came from, if any (relative paths resolve against its folder).
    public var baseDirectory: URL? = nil
    /// The pipeline file itself, if any (its name labels metrics).
    public var sourceFile: URL? = nil
    /// Deprecated keys used and the keys set (``ConfigurationNotes``), never part of equality.
    public var notes = ConfigurationNotes()
    /// The index generation these settings read and write (docs/GENERATIONS.md): set from the state's
    /// generation manifest when the configuration is loaded for a command, never by the pipeline file. Nil
    /// when generations were never used. Not part of ``fingerprint`` (the generation's own settings are).
    public var generation: String? = nil

    public init() {}

    /// Resolves a configured path: absolute paths as they are, relative ones against the pipeline file's
    /// folder (or the working directory when there is no file).
    public func resolve(_ path: String) -> URL {
        Self.resolve(path, against: baseDirectory)
    }

    /// The one rule for a configured or command-line path: `~` expanded, absolute paths as they are,
    /// relative ones against `base` (nil: the working directory), standardized (`..` and `.` removed).
    public static func resolve(_ path: String, against base: URL?) -> URL {
        let expanded = (path as NSString).expandingTildeInPath
        if expanded.hasPrefix("/") { return URL(fileURLWithPath: expanded).standardizedFileURL }
        let base = base ?? URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
        return base.appendingPathComponent(expanded).standardizedFileURL
    }
}
