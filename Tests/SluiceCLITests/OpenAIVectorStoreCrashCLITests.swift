import Foundation
import SluiceCore
import SluiceTesting
import Testing

/// kill -9 inside the OpenAI vector store sink's steps (`SLUICE_DEBUG_CRASH_AT`, see `CrashPoint`): a file
/// uploaded but not attached yet, a file attached but not processed yet, an old file detached but not
/// deleted yet, and files attached whose checkpoint was not committed. Files are storage the account
/// pays for: after the next runs, the account must hold exactly the files an uninterrupted sequence of
/// runs leaves, each attached and processed, none orphaned.
@Suite(.serialized)
struct OpenAIVectorStoreCrashCLITests {
    /// A variable of its own: the other suites set theirs while this one runs.
    static let keyVariable = "SLUICE_TEST_OPENAI_CRASH_KEY"

    /// The stand-in's files and attachments, with the vector store's id replaced by `<vs>` (two stand-ins
    /// give their stores different ids).
    struct EndState: Equatable, CustomStringConvertible {
        /// The account's files: name and size.
        var files: [String]
        /// The store's files: name, processing status and attributes.
        var attached: [String]
        var description: String {
            "files:\n  \(files.joined(separator: "\n  "))\nattached:\n  \(attached.joined(separator: "\n  "))"
        }
    }

    static func endState(_ server: StandInServer) throws -> EndState {
        let object = try server.jsonObject("/_standin/files")
        let files = object["files"] as? [[String: Any]] ?? []
        let stores = object["vector_stores"] as? [String: [[String: Any]]] ?? [:]
        func normalised(_ text: String) -> String {
            stores.keys.reduce(text) { $0.replacingOccurrences(of: $1, with: "<vs>") }
        }
        var names: [String: String] = [:]
        for file in files {
            names[file["id"] as? String ?? ""] = normalised(file["filename"] as? String ?? "?")
        }
        let accountFiles = files.map { "\(names[$0["id"] as? String ?? ""] ?? "?") \($0["bytes"] ?? "?") bytes" }
        var attached: [String] = []
        for (_, entries) in stores {
            for entry in entries {
                // The files' modification times differ between the two workspaces (copied at other times).
                var compared = entry["attributes"] as? [String: Any] ?? [:]
                compared["mtime"] = nil
                let attributes = try JSONSerialization.data(
                    withJSONObject: compared,
                    options: [.sortedKeys]
                )
                attached.append(
                    "\(names[entry["file_id"] as? String ?? ""] ?? "(no such file)") \(entry["status"] ?? "?") "
                        + String(decoding: attributes, as: UTF8.self)
                )
            }
        }
        return EndState(files: accountFiles.sorted(), attached: attached.sorted())
    }

    /// A workspace with the sample documents, and a stand-in of its own.
    static func setUp(_ name: String, key: String) async throws -> (Workspace, StandInServer, Workspace.Target) {
        let ws = try Workspace(name)
        let server = try await StandInServer.launch(
            script: "openai_vector_store_standin.py",
            arguments: ["--api-key", key]
        )
        let docs = ws.corpus.appendingPathComponent("docs")
        try FileManager.default.createDirectory(at: docs, withIntermediateDirectories: true)
        for sample in OpenAIVectorStoreCLITests.samples {
            try FileManager.default.copyItem(
                at: StandInServer.repositoryRoot.appendingPathComponent("samples/markdown/\(sample)"),
                to: docs.appendingPathComponent(sample)
            )
        }
        return (ws, server, OpenAIVectorStoreCLITests.target(ws, server, key: keyVariable))
    }

    /// The changes between the runs: one document changed and one deleted, then another changed.
    static func change(_ ws: Workspace, step: Int) throws {
        let docs = ws.corpus.appendingPathComponent("docs")
        let changed = docs.appendingPathComponent(step == 1 ? "git-README.md" : "zstd-README.md")
        try (String(contentsOf: changed, encoding: .utf8) + "\nA closing paragraph added in step \(step).\n")
            .write(to: changed, atomically: true, encoding: .utf8)
        if step == 1 { try FileManager.default.removeItem(at: docs.appendingPathComponent("pip-getting-started.md")) }
    }

    @Test(
        "kill -9 between upload, attach, processing, detach, file deletion and commit: no orphaned file, the same end state"
    )
    func killsLeaveNoOrphans() async throws {
        setenv(Self.keyVariable, "sk-crash-\(UInt32.random(in: 0...UInt32.max))", 1)
        let key = ProcessInfo.processInfo.environment[Self.keyVariable]!

        // The reference: the same three runs, never interrupted.
        let (reference, referenceServer, referenceTarget) = try await Self.setUp("openai-crash-reference", key: key)
        defer {
            referenceServer.stop()
            reference.cleanUp()
        }
        try await reference.run(referenceTarget, expecting: 0)
        try Self.change(reference, step: 1)
        try await reference.run(referenceTarget, ["--prune"], expecting: 0)
        try Self.change(reference, step: 2)
        try await reference.run(referenceTarget, expecting: 0)
        let expected = try Self.endState(referenceServer)
        #expect(expected.files.count == OpenAIVectorStoreCLITests.samples.count - 1, "\(expected)")

        let (ws, server, target) = try await Self.setUp("openai-crash", key: key)
        defer {
            server.stop()
            ws.cleanUp()
        }
        func killed(at point: String, _ extra: [String] = []) async throws {
            let result = try await ws.sluice(
                ws.runArguments(target, extra),
                environment: ["SLUICE_DEBUG_CRASH_AT": point]
            )
            CrashWindowCLITests.expectKilled(result)
        }
        // Run 1: killed with a file uploaded but not attached, then with one attached but not processed.
        try await killed(at: "openai-vector-store.uploaded@3")
        try await killed(at: "openai-vector-store.attached@1")
        try await ws.run(target, expecting: 0)
        // Run 2: killed with an old file detached but not deleted, then after the store writes but before
        // the checkpoint's commit.
        try Self.change(ws, step: 1)
        try await killed(at: "openai-vector-store.detached@1", ["--prune"])
        try await ws.run(target, ["--prune"], expecting: 0)
        try Self.change(ws, step: 2)
        try await killed(at: "upsert.sink-written@1")
        try await ws.run(target, expecting: 0)

        let found = try Self.endState(server)
        #expect(found == expected, "after the kills:\n\(found)\nuninterrupted:\n\(expected)")
        let verify = try await ws.sluice(["verify", ws.pipeline.path] + target.arguments)
        #expect(verify.exitCode == 0, "\(verify)")
    }
}
