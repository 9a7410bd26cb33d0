import Foundation
import SluiceCore
import SluiceHTTP
import SluiceTesting
import Testing

/// Image captions (`extract.images.caption`, docs/CONFIGURATION.md) through the `sluice` binary, against the
/// vision stand-in (Sources/SluiceTesting/StandIns/vision_standin.py), which checks the image it receives
/// (data URL, format, size, detail) and answers like OpenAI's chat completions, errors included.
@Suite(.serialized)
struct ImageCaptionCLITests {
    static let keyVariable = "SLUICE_TEST_VISION_KEY"
    static let model = "standin-vision-1"
    static let samples = StandInServer.repositoryRoot.appendingPathComponent("samples")

    /// A workspace whose corpus holds a photo without text (`photo.png`) and a scanned page (`scan.png`).
    static func workspace(_ label: String) throws -> Workspace {
        let ws = try Workspace(label)
        try Data(PNGWriter.photo()).write(to: ws.corpus.appendingPathComponent("photo.png"))
        try FileManager.default.copyItem(
            at: samples.appendingPathComponent("images/xz-faq-page.png"),
            to: ws.corpus.appendingPathComponent("scan.png")
        )
        return ws
    }

    static func settings(_ server: StandInServer, _ extra: [String] = []) -> [String] {
        [
            "--set", "source.include=[\"**/*.png\"]", "--set", "extract.images.caption.enabled=true",
            "--set", "extract.images.caption.base_url=\(server.baseURL)/v1",
            "--set", "extract.images.caption.model=\(model)",
            "--set", "extract.images.caption.api_key_env=\(keyVariable)",
        ] + extra
    }

    static func stats(_ server: StandInServer) async throws -> [String: Any] {
        let response = try await HTTPClient.shared.send(HTTPRequest(url: server.baseURL + "/stats"))
        return try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
    }

    static func control(_ server: StandInServer, _ body: String) async throws {
        let response = try await HTTPClient.shared.send(.postJSON(server.baseURL + "/control", body: Array(body.utf8)))
        #expect(response.status == 200, "\(response)")
    }

    /// Whether `secret` is in any file under `folder` (the state's LMDB files, the store's files).
    static func anyFile(under folder: URL, contains secret: String) -> Bool {
        guard let walker = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil) else {
            return false
        }
        let needle = Data(secret.utf8)
        for case let url as URL in walker {
            if let data = try? Data(contentsOf: url), data.range(of: needle) != nil { return true }
        }
        return false
    }

    @Test(
        "a photo without text is found by its caption; OCR text and caption marked; a copy re-run asks nothing; the key nowhere"
    )
    func captionsEndToEnd() async throws {
        let ws = try Self.workspace("caption")
        defer { ws.cleanUp() }
        let key = "sk-vision-\(UUID().uuidString)"
        let server = try await StandInServer.launch(
            script: "vision_standin.py",
            arguments: ["--api-key", key, "--require-model"]
        )
        let target = ws.target("t")
        let statsFile = ws.file("stats.json")
        let first = try await ws.sluice(
            ws.runArguments(target, Self.settings(server) + ["--stats-json", statsFile.path]),
            environment: [Self.keyVariable: key],
            timeout: .seconds(180)
        )
        #expect(first.exitCode == 0, "\(first)")
        #expect(try ws.stats(statsFile)["captions_made"] == 2)
        var wire = try await Self.stats(server)
        #expect(wire["ok"] as? Int == 2 && wire["requests"] as? Int == 2, "\(wire)")
        #expect(wire["formats"] as? [String: Int] == ["png": 2], "\(wire)")
        #expect(wire["details"] as? [String: Int] == ["low": 2], "the default detail is low: \(wire)")
        #expect(wire["key_in_body"] as? Int == 0, "the key travels in a header only")
        let last = try #require(wire["last_image"] as? [String: Any])
        #expect(last["model"] as? String == Self.model && last["mime"] as? String == "image/png", "\(last)")

        let records = try Export.records(try await ws.export(target))
        let photo = records.filter { $0.documentKey == "photo.png" }
        #expect(!photo.isEmpty, "the photo without text is indexed by its caption")
        #expect(photo.map(\.text).joined().contains("sandy beach"), "\(photo.map(\.text))")
        #expect(photo.allSatisfy { $0.metadata["caption_model"] == .string(Self.model) })
        #expect(
            photo.allSatisfy { $0.metadata["text_sources"] == "caption" && $0.metadata["text_source"] == "caption" }
        )
        let scan = records.filter { $0.documentKey == "scan.png" }
        #expect(scan.map(\.text).joined(separator: " ").contains("designed by Igor Pavlov"))
        #expect(scan.allSatisfy { $0.metadata["text_sources"] == "ocr,caption" })
        #expect(Set(scan.compactMap { $0.metadata["text_source"] }) == ["ocr", "caption"], "\(scan.map(\.metadata))")
        #expect(scan.contains { $0.metadata["text_source"] == "ocr" && $0.metadata["ocr_confidence"] != nil })

        // Every caption of the stand-in tells of a beach: the photo is among the hits, by its caption.
        let search = try await ws.sluice(
            ["search", "sandy beach blue sky", "--json", "-k", "2", ws.pipeline.path] + target.arguments
        )
        #expect(search.exitCode == 0, "\(search)")
        let hits = try search.stdout.split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        #expect(hits.contains { $0["document_key"] as? String == "photo.png" }, "\(search.stdout)")

        // A copy of the photo under a new name is extracted again: its caption comes from the state's cache.
        try FileManager.default.copyItem(
            at: ws.corpus.appendingPathComponent("photo.png"),
            to: ws.corpus.appendingPathComponent("photo-copy.png")
        )
        let second = try await ws.sluice(
            ws.runArguments(target, Self.settings(server) + ["--stats-json", statsFile.path]),
            environment: [Self.keyVariable: key],
            timeout: .seconds(180)
        )
        #expect(second.exitCode == 0, "\(second)")
        let again = try ws.stats(statsFile)
        #expect(again["captions_cached"] == 1 && (again["captions_made"] ?? 0) == 0, "\(again.values)")
        wire = try await Self.stats(server)
        #expect(wire["requests"] as? Int == 2, "no caption request on the re-run: \(wire)")
        #expect(try Export.records(try await ws.export(target)).contains { $0.documentKey == "photo-copy.png" })

        // `check` captions a small test image.
        let check = try await ws.sluice(
            ["check", ws.pipeline.path] + target.arguments + Self.settings(server),
            environment: [Self.keyVariable: key]
        )
        #expect(check.exitCode == 0, "\(check)")
        let line = check.stdout.split(separator: "\n").first { $0.contains("captioner") }
        #expect(
            line?.hasPrefix("ok") == true && line?.contains("captioned a 16×16 test image") == true,
            "\(check.stdout)"
        )

        // The key: in no output, and in no file of the state or the store.
        for result in [first, second, search, check] {
            #expect(!result.stdout.contains(key) && !result.stderr.contains(key))
        }
        #expect(!Self.anyFile(under: target.state, contains: key))
        #expect(!Self.anyFile(under: target.index, contains: key))
    }

    @Test(
        "turning captions on retries the photo that failed without; a model change re-captions nothing; a revision re-captions all"
    )
    func onRequest() async throws {
        let ws = try Self.workspace("caption-request")
        defer { ws.cleanUp() }
        let server = try await StandInServer.launch(script: "vision_standin.py")
        let target = ws.target("t")
        let statsFile = ws.file("stats.json")
        let png = ["--set", "source.include=[\"**/*.png\"]"]
        let without = try await ws.sluice(ws.runArguments(target, png), timeout: .seconds(180))
        #expect(without.exitCode == 2, "the photo has no text: \(without)")
        #expect(try await ws.status(target).failures["photo.png"]?.contains("empty-document") == true)

        func run(_ extra: [String]) async throws -> RunStatsJSON {
            let result = try await ws.sluice(
                ws.runArguments(target, Self.settings(server, extra) + ["--stats-json", statsFile.path]),
                environment: [Self.keyVariable: "unused"],
                timeout: .seconds(180)
            )
            #expect(result.exitCode == 0, "\(result)")
            return try ws.stats(statsFile)
        }
        // On: both images processed again (the known failure too), both captioned.
        #expect(try await run([])["captions_made"] == 2)
        #expect(try await ws.status(target).documents == ["indexed": 2])
        // Another model: nothing already indexed is sent again.
        let other = try await run(["--set", "extract.images.caption.model=standin-vision-2"])
        #expect(other["captions_made"] == nil && (other["documents_upserted"] ?? 0) == 0, "\(other.values)")
        var wire = try await Self.stats(server)
        #expect(wire["requests"] as? Int == 2, "\(wire)")
        // The request: a revision. Both images captioned again by the new model.
        let revised = try await run([
            "--set", "extract.images.caption.model=standin-vision-2", "--set", "extract.images.caption.revision=2",
        ])
        #expect(revised["captions_made"] == 2, "\(revised.values)")
        wire = try await Self.stats(server)
        #expect(wire["requests"] as? Int == 4, "\(wire)")
        let records = try Export.records(try await ws.export(target))
        #expect(records.allSatisfy { $0.metadata["caption_model"] == "standin-vision-2" }, "\(records.map(\.metadata))")
        // Back to the first model at a new revision: its captions were collected with the run that stopped
        // using them (as entries of any identity no longer in use are), so they are made again.
        let back = try await run(["--set", "extract.images.caption.revision=3"])
        #expect(back["captions_made"] == 2 && back["captions_cached"] == nil, "\(back.values)")
    }

    @Test("429 with Retry-After: waited for, then captioned; 5xx retried")
    func rateLimitedThenCaptioned() async throws {
        let ws = try Self.workspace("caption-429")
        defer { ws.cleanUp() }
        try FileManager.default.removeItem(at: ws.corpus.appendingPathComponent("scan.png"))
        let server = try await StandInServer.launch(script: "vision_standin.py")
        try await Self.control(server, #"{"rate_limit_count": 1, "retry_after": "1", "fail_count": 1}"#)
        let target = ws.target("t")
        let result = try await ws.sluice(
            ws.runArguments(target, Self.settings(server, ["--set", "extract.images.caption.detail=high"])),
            environment: [Self.keyVariable: "unused"],
            timeout: .seconds(180)
        )
        #expect(result.exitCode == 0, "\(result)")
        let wire = try await Self.stats(server)
        #expect(wire["rate_limited"] as? Int == 1 && wire["server_errors"] as? Int == 1, "\(wire)")
        #expect(wire["ok"] as? Int == 1 && wire["details"] as? [String: Int] == ["high": 1], "\(wire)")
        #expect(try await ws.status(target).documents == ["indexed": 1])
    }

    @Test(
        "an image too large: not sent over max_image_mb, refused by the server otherwise; OCR text kept; no text: fails with both reasons"
    )
    func oversizeImages() async throws {
        let ws = try Self.workspace("caption-size")
        defer { ws.cleanUp() }
        // Refused by the server (400 image_too_large): every image is over its 1000 bytes.
        let server = try await StandInServer.launch(
            script: "vision_standin.py",
            arguments: ["--max-image-bytes", "1000"]
        )
        let target = ws.target("t")
        let refused = try await ws.sluice(
            ws.runArguments(target, Self.settings(server)),
            environment: [Self.keyVariable: "unused"],
            timeout: .seconds(180)
        )
        #expect(refused.exitCode == 2, "the photo without text fails: \(refused)")
        let failures = try await ws.status(target).failures
        #expect(failures["photo.png"]?.contains("empty-document") == true, "\(failures)")
        #expect(failures["photo.png"]?.contains("Image too large") == true, "\(failures)")
        #expect(failures["scan.png"] == nil)
        let scan = try Export.records(try await ws.export(target)).filter { $0.documentKey == "scan.png" }
        #expect(!scan.isEmpty && scan.allSatisfy { $0.metadata["text_sources"] == "ocr" })
        #expect(scan.allSatisfy { $0.metadata["caption_skipped"]?.text.contains("Image too large") == true })
        var wire = try await Self.stats(server)
        #expect(wire["too_large"] as? Int == 2 && wire["requests"] as? Int == 2, "each image sent once: \(wire)")

        // Over extract.images.caption.max_image_mb: not sent at all.
        let small = ws.target("small")
        let local = try await ws.sluice(
            ws.runArguments(small, Self.settings(server, ["--set", "extract.images.caption.max_image_mb=0.001"])),
            environment: [Self.keyVariable: "unused"],
            timeout: .seconds(180)
        )
        #expect(local.exitCode == 2, "\(local)")
        let reasons = try await ws.status(small).failures
        #expect(reasons["photo.png"]?.contains("extract.images.caption.max_image_mb") == true, "\(reasons)")
        wire = try await Self.stats(server)
        #expect(wire["requests"] as? Int == 2, "nothing sent: \(wire)")
    }

    @Test(
        "401: the run stops with exit 5, the key scrubbed, the photo left for the next run; an unset variable is exit 1"
    )
    func unauthorized() async throws {
        let ws = try Self.workspace("caption-401")
        defer { ws.cleanUp() }
        let key = "sk-right-\(UUID().uuidString)"
        let wrong = "sk-wrong-\(UUID().uuidString)"
        let server = try await StandInServer.launch(script: "vision_standin.py", arguments: ["--api-key", key])
        let target = ws.target("t")
        let refused = try await ws.sluice(
            ws.runArguments(target, Self.settings(server)),
            environment: [Self.keyVariable: wrong],
            timeout: .seconds(180)
        )
        #expect(refused.exitCode == 5, "\(refused)")
        #expect(!refused.stdout.contains(wrong) && !refused.stderr.contains(wrong), "\(refused)")
        #expect(refused.stderr.contains("401"), "\(refused.stderr)")
        #expect(try await Self.stats(server)["unauthorized"] as? Int ?? 0 >= 1)
        #expect(try await ws.status(target).failures.isEmpty, "not the documents' fault")
        let check = try await ws.sluice(
            ["check", ws.pipeline.path] + target.arguments + Self.settings(server),
            environment: [Self.keyVariable: wrong]
        )
        #expect(check.exitCode == 1, "\(check)")
        #expect(check.stdout.contains("captioner") && !check.stdout.contains(wrong) && !check.stderr.contains(wrong))

        let unset = try await ws.sluice(
            ws.runArguments(target, Self.settings(server)),
            environment: [Self.keyVariable: nil]
        )
        #expect(unset.exitCode == 1 && unset.stderr.contains(Self.keyVariable), "\(unset)")

        let fixed = try await ws.sluice(
            ws.runArguments(target, Self.settings(server)),
            environment: [Self.keyVariable: key],
            timeout: .seconds(180)
        )
        #expect(fixed.exitCode == 0, "\(fixed)")
        #expect(try await ws.status(target).documents == ["indexed": 2])
        #expect(!Self.anyFile(under: target.state, contains: wrong))

        // The server gone: check says unavailable, and a run stops before taking any document (exit 6).
        server.stop()
        try FileManager.default.copyItem(
            at: ws.corpus.appendingPathComponent("photo.png"),
            to: ws.corpus.appendingPathComponent("photo-copy.png")
        )
        let down = try await ws.sluice(
            ["check", ws.pipeline.path] + target.arguments + Self.settings(server),
            environment: [Self.keyVariable: key]
        )
        #expect(down.exitCode == 6, "\(down)")
        let gone = try await ws.sluice(
            ws.runArguments(target, Self.settings(server)),
            environment: [Self.keyVariable: key],
            timeout: .seconds(180)
        )
        #expect(gone.exitCode == 6 && gone.stderr.contains("cannot be reached"), "\(gone)")
        #expect(try await ws.status(target).documents == ["indexed": 2], "nothing taken, nothing failed")
    }
}
