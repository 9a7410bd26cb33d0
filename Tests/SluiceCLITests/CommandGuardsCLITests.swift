import Foundation
import SluiceCore
import SluiceTesting
import Testing

/// What session 46's hostile campaign found the commands doing with their inputs and outputs, each seen
/// failing before its fix: an output file that is what the command reads (the index emptied, exit 135), an
/// output that cannot be written found after the work (exit 70), `verify` creating a mistyped state and
/// calling it consistent, a `--log-level` that names no level read as `info`, and a Markdown front matter
/// with a list as a key stopping every run with a fatal error (exit 132).
@Suite(.serialized)
struct CommandGuardsCLITests {
    @Test("an output that is one of the command's inputs is refused before anything is truncated")
    func outputOverInputRefused() async throws {
        let ws = try Workspace("guards-output")
        defer { ws.cleanUp() }
        try Corpus.write(count: 3, into: ws.corpus, seed: 0x6A_0046)
        let main = ws.target("main")
        try await ws.run(main, expecting: 0)
        let before = try await ws.export(main)
        let store = main.index.appendingPathComponent("data.mdb")
        let size = try FileManager.default.attributesOfItem(atPath: store.path)[.size] as? Int
        let export = try await ws.sluice(["export", ws.pipeline.path] + main.arguments + ["-o", store.path])
        #expect(export.exitCode == 1, "\(export)")
        #expect(export.stderr.contains("will not write"), "\(export)")
        #expect(try FileManager.default.attributesOfItem(atPath: store.path)[.size] as? Int == size)
        // Inside the state's folder too, under another name.
        let intoState = try await ws.sluice(
            ["export", ws.pipeline.path] + main.arguments + ["-o", main.state.appendingPathComponent("x.jsonl").path]
        )
        #expect(intoState.exitCode == 1, "\(intoState)")
        expectSameExport(try await ws.export(main), before, "after the refused exports")

        // `embed --input f --output f`, through a link too.
        let texts = ws.file("texts.jsonl")
        try #"{"text": "a line to embed"}"#.write(to: texts, atomically: true, encoding: .utf8)
        let link = ws.file("texts-link.jsonl")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: texts)
        for output in [texts, link] {
            let embed = try await ws.sluice(
                ["embed", "--provider", "hash", "--input", texts.path, "--output", output.path]
            )
            #expect(embed.exitCode == 1, "\(embed)")
            #expect(embed.stderr.contains("will not write"), "\(embed)")
            #expect(try String(contentsOf: texts, encoding: .utf8) == #"{"text": "a line to embed"}"#)
        }
    }

    @Test("an output that cannot be written is a usage error (exit 1), found before a run's work")
    func unwritableOutputIsAUsageError() async throws {
        let ws = try Workspace("guards-unwritable")
        defer { ws.cleanUp() }
        try Corpus.write(count: 2, into: ws.corpus, seed: 0x6A_0047)
        let main = ws.target("main")
        let missing = ws.file("no-such-folder/stats.json").path
        let run = try await ws.run(main, ["--stats-json", missing], expecting: 1)
        #expect(run.stderr.contains("cannot write"), "\(run)")
        #expect(!FileManager.default.fileExists(atPath: main.state.appendingPathComponent("data.mdb").path))
        try await ws.run(main, expecting: 0)
        for output in [missing, ws.outputs.path] {
            let export = try await ws.sluice(["export", ws.pipeline.path] + main.arguments + ["-o", output])
            #expect(export.exitCode == 1, "\(export)")
        }
    }

    @Test("verify without a state refuses (exit 1) and creates neither the state nor the store")
    func verifyWithoutAState() async throws {
        let ws = try Workspace("guards-verify")
        defer { ws.cleanUp() }
        let typo = ws.target("typo")
        let verify = try await ws.sluice(["verify", ws.pipeline.path] + typo.arguments)
        #expect(verify.exitCode == 1, "\(verify)")
        #expect(verify.stderr.contains("run the pipeline first"), "\(verify)")
        // status too: a state folder that is not there (and no generations to follow) is a mistake worth an error.
        let status = try await ws.sluice(["status", ws.pipeline.path] + typo.arguments)
        #expect(status.exitCode != 0 && status.stderr.contains("run the pipeline first"), "\(status)")
        #expect(!FileManager.default.fileExists(atPath: typo.state.path))
        #expect(!FileManager.default.fileExists(atPath: typo.index.path))
    }

    @Test("a --log-level that names no level is refused (exit 1)")
    func unknownLogLevel() async throws {
        let ws = try Workspace("guards-log-level")
        defer { ws.cleanUp() }
        let main = ws.target("main")
        let result = try await ws.run(main, ["--log-level", "warn"], expecting: 1)
        #expect(result.stderr.contains("--log-level"), "\(result)")
    }

    @Test("a front matter with a list as a key, or aliases that multiply, is not front matter; the run goes on")
    func hostileFrontMatter() async throws {
        let ws = try Workspace("guards-front-matter")
        defer { ws.cleanUp() }
        try "---\ntitle: ok\n? [a, b]\n: c\n---\n# Hello\n\nSome text about sluices.\n".write(
            to: ws.corpus.appendingPathComponent("complex-key.md"),
            atomically: true,
            encoding: .utf8
        )
        var bomb = "---\na0: &a0 [x, x, x, x, x, x, x, x, x]\n"
        for level in 1...10 {
            bomb += "a\(level): &a\(level) [\(Array(repeating: "*a\(level - 1)", count: 9).joined(separator: ", "))]\n"
        }
        try (bomb + "---\n# Bomb\n\nText after the aliases.\n").write(
            to: ws.corpus.appendingPathComponent("aliases.md"),
            atomically: true,
            encoding: .utf8
        )
        let main = ws.target("main")
        try await ws.run(main, expecting: 0)
        let status = try await ws.status(main)
        #expect(status.documents == ["indexed": 2], "\(status.text)")
    }
}
