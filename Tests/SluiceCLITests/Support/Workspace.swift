import Foundation
import SluiceCore
import SluiceTesting
import Testing

/// One test's private world: a temporary folder with a corpus, a pipeline file, any number of
/// state/sink pairs ("targets"), and the outputs of the commands it ran. Never touches the repository's
/// `.sluice/`. Removed by ``cleanUp()`` (kept when `SLUICE_KEEP_TEST_DIRS` is set, for debugging).
struct Workspace: Sendable {
    let root: URL
    let corpus: URL
    let pipeline: URL
    let outputs: URL

    /// A state folder and the sink that goes with it: the local store at `index`, or the `--set sink.…`
    /// settings in `sink`.
    struct Target: Sendable {
        let state: URL
        let index: URL
        var sink: [String] = []
        /// `--state … --set sink.path=…` (or the target's own sink settings)
        var arguments: [String] {
            ["--state", state.path] + (sink.isEmpty ? ["--set", "sink.path=\(index.path)"] : sink)
        }
    }

    /// Settings every test uses unless it overrides them (`--set` wins over the pipeline file).
    static let pipelineYAML = """
        # Written by SluiceCLITests. Paths are overridden on the command line.
        source:
          path: ./corpus
          include: ["**/*.txt", "**/*.md"]
          exclude: ["**/.git/**"]
        extract:
          timeout_seconds: 60
        chunk:
          strategy: recursive
          max_tokens: 200
          overlap_tokens: 24
        embed:
          provider: hash
          dimensions: 48
          batch: 64
          linger_ms: 5
        sink:
          kind: local
          path: ./unused/index
        state: ./unused/state
        run:
          prune: false
          max_delete_fraction: 0.2
          buffer: 16

        """

    init(_ label: String) throws {
        _ = try SluiceExecutable.url()  // fail first, and clearly, if the executable is not built
        root = try TemporaryDirectory.make("sluice-cli-\(label)-\(ProcessInfo.processInfo.processIdentifier)")
        corpus = root.appendingPathComponent("corpus")
        pipeline = root.appendingPathComponent("pipeline.yaml")
        outputs = root.appendingPathComponent("outputs")
        for folder in [root, corpus, outputs] {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        }
        try Self.pipelineYAML.write(to: pipeline, atomically: true, encoding: .utf8)
    }

    func cleanUp() { TemporaryDirectory.remove(root) }

    func target(_ name: String) -> Target {
        let folder = root.appendingPathComponent("targets").appendingPathComponent(name)
        return Target(state: folder.appendingPathComponent("state"), index: folder.appendingPathComponent("index"))
    }

    func file(_ name: String) -> URL { root.appendingPathComponent(name) }

    // MARK: Commands

    /// `sluice run PIPELINE --state … --set sink.path=… --source CORPUS EXTRA…`
    func runArguments(_ target: Target, _ extra: [String] = []) -> [String] {
        // --quiet keeps info lines with an explicit level: tests wait for "run started".
        ["run", pipeline.path] + target.arguments + ["--source", corpus.path, "--quiet", "--log-level", "info"] + extra
    }

    /// Starts `sluice ARGUMENTS` without waiting. Its temporary files (`sluice serve`'s progress files, those of
    /// workers and their libraries) go to the workspace's `tmp` (TMPDIR), so that ``cleanUp()`` removes them even
    /// when the child was killed before it could (unless `environment` names another TMPDIR). `executable`
    /// replaces the built `sluice`.
    func start(
        _ arguments: [String],
        environment: [String: String?] = [:],
        executable: URL? = nil
    ) throws -> SluiceProcess {
        let temporary = root.appendingPathComponent("tmp")
        try FileManager.default.createDirectory(at: temporary, withIntermediateDirectories: true)
        var environment = environment
        if environment["TMPDIR"] == nil { environment["TMPDIR"] = temporary.path }
        return try SluiceProcess(
            arguments,
            in: root,
            environment: environment,
            outputs: outputs,
            executable: executable
        )
    }

    /// Runs `sluice ARGUMENTS` to the end (killed and failed past `timeout`).
    @discardableResult
    func sluice(
        _ arguments: [String],
        environment: [String: String?] = [:],
        timeout: Duration = .seconds(600)
    ) async throws -> CommandResult {
        try await start(arguments, environment: environment).wait(timeout: timeout)
    }

    /// `sluice run` on a target.
    @discardableResult
    func run(
        _ target: Target,
        _ extra: [String] = [],
        auditLog: URL? = nil,
        timeout: Duration = .seconds(600)
    ) async throws -> CommandResult {
        try await sluice(
            runArguments(target, extra),
            environment: ["SLUICE_EMBED_AUDIT_LOG": auditLog?.path],
            timeout: timeout
        )
    }

    /// `sluice run` that must exit with `code`; records an issue (with the command's output) if not.
    @discardableResult
    func run(
        _ target: Target,
        _ extra: [String] = [],
        auditLog: URL? = nil,
        expecting code: Int32,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> CommandResult {
        let result = try await run(target, extra, auditLog: auditLog)
        #expect(result.exitCode == code, "\(result)", sourceLocation: sourceLocation)
        return result
    }

    /// `sluice export` of a target, as bytes (must exit 0).
    func export(_ target: Target, sourceLocation: SourceLocation = #_sourceLocation) async throws -> Data {
        let process = try start(["export", pipeline.path] + target.arguments)
        let result = try await process.wait(timeout: .seconds(600))
        try #require(result.exitCode == 0, "\(result)", sourceLocation: sourceLocation)
        return try Data(contentsOf: process.stdoutURL)
    }

    /// `sluice status` of a target (must exit 0).
    func status(_ target: Target, sourceLocation: SourceLocation = #_sourceLocation) async throws -> StatusReport {
        let result = try await sluice(["status", pipeline.path] + target.arguments)
        try #require(result.exitCode == 0, "\(result)", sourceLocation: sourceLocation)
        return StatusReport(text: result.stdout)
    }

    /// Reads a `--stats-json` file.
    func stats(_ url: URL, sourceLocation: SourceLocation = #_sourceLocation) throws -> RunStatsJSON {
        let data = try Data(contentsOf: url)
        let object = try JSONSerialization.jsonObject(with: data)
        let dictionary = try #require(
            object as? [String: Any],
            "stats JSON is not an object",
            sourceLocation: sourceLocation
        )
        return RunStatsJSON(
            values: dictionary.compactMapValues { $0 as? NSNumber }.mapValues { $0.intValue },
            keys: Set(dictionary.keys),
            decoded: try JSONDecoder().decode(RunStats.self, from: data)
        )
    }
}

/// The counters of a `--stats-json` file, by their JSON keys.
struct RunStatsJSON: Sendable {
    var values: [String: Int]
    var keys: Set<String>
    /// The same file decoded as SluiceCore's `RunStats` (for the flags).
    var decoded: RunStats
    subscript(_ key: String) -> Int? { values[key] }
}

/// `sluice status`, parsed just enough for the tests.
struct StatusReport: Sendable {
    var text: String

    /// Documents by status ("indexed", "failed").
    var documents: [String: Int] {
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("documents:") }) else { return [:] }
        let counts = line.dropFirst("documents:".count).split(separator: "·")[0]
        var out: [String: Int] = [:]
        for part in counts.split(separator: ",") {
            let words = part.split(separator: " ")
            if words.count == 2, let n = Int(words[0]) { out[String(words[1])] = n }
        }
        return out
    }

    /// The "embedding cache: N" figure.
    var cacheCount: Int? {
        guard let range = text.range(of: "embedding cache: ") else { return nil }
        return Int(text[range.upperBound...].prefix { $0.isNumber })
    }

    /// Failure lines ("key: code: message") by document key.
    var failures: [String: String] {
        guard let range = text.range(of: "\nfailures") else { return [:] }
        var out: [String: String] = [:]
        for line in text[range.upperBound...].split(separator: "\n").dropFirst() where line.hasPrefix("  ") {
            let trimmed = line.dropFirst(2)
            guard let colon = trimmed.range(of: ": ") else { continue }
            out[String(trimmed[..<colon.lowerBound])] = String(trimmed[colon.upperBound...])
        }
        return out
    }
}

/// Export lines decoded.
enum Export {
    static func records(_ data: Data) throws -> [VectorRecord] {
        let decoder = JSONDecoder()
        return try data.split(separator: 0x0A).map { try decoder.decode(VectorRecord.self, from: Data($0)) }
    }
}

/// The lines of an embed audit log (hex chunk hashes).
enum AuditLog {
    static func lines(_ url: URL) -> [String] {
        guard let text = try? String(contentsOf: url, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").map(String.init)
    }
}
