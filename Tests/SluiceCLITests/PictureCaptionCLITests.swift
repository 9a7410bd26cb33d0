import Foundation
import SluiceCore
import SluiceTesting
import Testing

/// Captions of the pictures inside PDFs, DOCX and PPTX (`extract.images.caption.pictures`) through the
/// `sluice` binary, against the vision stand-in, with LibreOffice-made documents
/// (Tests/SluiceExtractTests/Fixtures/pictures.*: a 240×160 drawing, a 16×16 icon and a 480×3 rule each).
@Suite(.serialized)
struct PictureCaptionCLITests {
    static let fixtures = StandInServer.repositoryRoot.appendingPathComponent("Tests/SluiceExtractTests/Fixtures")

    static func add(_ ws: Workspace, _ formats: [String]) throws {
        for format in formats {
            try FileManager.default.copyItem(
                at: fixtures.appendingPathComponent("pictures.\(format)"),
                to: ws.corpus.appendingPathComponent("pictures.\(format)")
            )
        }
    }

    static func settings(_ server: StandInServer, pictures: Bool = true, _ extra: [String] = []) -> [String] {
        ImageCaptionCLITests.settings(server, ["--set", "source.include=[\"**/*.docx\",\"**/*.pdf\",\"**/*.pptx\"]"])
            + (pictures ? ["--set", "extract.images.caption.pictures.enabled=true"] : []) + extra
    }

    @Test(
        "off by default; on: exactly the pictures above the minimum are sent, each caption where its picture sits; re-runs send nothing"
    )
    func picturesCaptionedOnceWhereTheySit() async throws {
        let ws = try Workspace("pictures")
        defer { ws.cleanUp() }
        try Self.add(ws, ["docx", "pdf"])
        let server = try await StandInServer.launch(script: "vision_standin.py")
        let target = ws.target("t")
        let statsFile = ws.file("stats.json")
        func run(pictures: Bool = true, _ extra: [String] = []) async throws -> RunStatsJSON {
            let result = try await ws.sluice(
                ws.runArguments(
                    target,
                    Self.settings(server, pictures: pictures, extra) + ["--stats-json", statsFile.path]
                ),
                environment: [ImageCaptionCLITests.keyVariable: "unused"],
                timeout: .seconds(180)
            )
            #expect(result.exitCode == 0, "\(result)")
            return try ws.stats(statsFile)
        }
        // Captions on for image files only: no picture of a document is sent.
        _ = try await run(pictures: false)
        var wire = try await ImageCaptionCLITests.stats(server)
        #expect(wire["requests"] as? Int == 0, "\(wire)")

        // On: the DOCX and the PDF are processed again; each sends its drawing, not its icon or rule.
        let first = try await run()
        #expect(first["captions_made"] == 2, "\(first.values)")
        wire = try await ImageCaptionCLITests.stats(server)
        #expect(wire["requests"] as? Int == 2 && wire["sizes"] as? [String: Int] == ["240x160": 2], "\(wire)")
        let records = try Export.records(try await ws.export(target))
        for key in ["pictures.docx", "pictures.pdf"] {
            let document = records.filter { $0.documentKey == key }
            #expect(!document.isEmpty, "\(key)")
            let captioned = document.filter { $0.text.contains("Picture: A wide sandy beach") }
            #expect(captioned.count == 1, "\(key): \(document.map(\.text))")
            #expect(captioned.first?.metadata["text_source"] == "text,caption", "\(captioned.map(\.metadata))")
            #expect(
                document.allSatisfy {
                    $0.metadata["caption_model"] == .string(ImageCaptionCLITests.model)
                        && $0.metadata["text_sources"] == "text,caption" && $0.metadata["pictures_captioned"] == 1
                        && $0.metadata["pictures_skipped"] == 2 && $0.metadata["pictures_failed"] == nil
                },
                "\(key): \(document.map(\.metadata))"
            )
        }
        // The DOCX's caption follows the paragraph before its picture, before the next heading's text.
        let docx = records.filter { $0.documentKey == "pictures.docx" }.map(\.text).joined(separator: "\n")
        let view = try #require(docx.range(of: "most visitors remember."))
        let caption = try #require(docx.range(of: "Picture: A wide sandy beach"))
        #expect(view.upperBound <= caption.lowerBound, "\(docx)")
        #expect(docx.range(of: "Moorings are let").map { caption.upperBound <= $0.lowerBound } ?? false, "\(docx)")
        // The PDF's is on its page.
        #expect(
            records.first { $0.documentKey == "pictures.pdf" && $0.text.contains("Picture:") }?.metadata["page"] == 1
        )

        // A deck with the DOCX's very picture: its caption comes from the cache, on its slide.
        try Self.add(ws, ["pptx"])
        let deck = try await run()
        #expect(deck["captions_cached"] == 1 && deck["captions_made"] == nil, "\(deck.values)")
        let slides = try Export.records(try await ws.export(target)).filter { $0.documentKey == "pictures.pptx" }
        #expect(
            slides.first { $0.text.contains("Picture: A wide sandy beach") }?.metadata["page"] == 2,
            "\(slides.map(\.metadata))"
        )

        // Nothing changed: nothing sent.
        _ = try await run()
        wire = try await ImageCaptionCLITests.stats(server)
        #expect(wire["requests"] as? Int == 2, "no picture sent twice: \(wire)")

        // The request to caption again (a revision): every picture is sent again, each once (the DOCX and the
        // deck share theirs: one of them may find the other's new caption in the cache, or both send it when
        // they are captioned at the same moment).
        let revised = try await run(["--set", "extract.images.caption.revision=2"])
        let made = revised["captions_made"] ?? 0
        #expect(made >= 2 && made + (revised["captions_cached"] ?? 0) == 3, "\(revised.values)")
        wire = try await ImageCaptionCLITests.stats(server)
        #expect(wire["requests"] as? Int == 2 + made, "\(wire)")
        // The same revision again, every document processed again: every caption from the cache.
        let again = try await run(["--set", "extract.images.caption.revision=2", "--reembed"])
        #expect(again["captions_cached"] == 3 && again["captions_made"] == nil, "\(again.values)")
        wire = try await ImageCaptionCLITests.stats(server)
        #expect(wire["requests"] as? Int == 2 + made, "nothing sent at the same revision: \(wire)")
        // Back to the first revision: its captions were collected by the run that stopped using them (as
        // entries of any identity no longer in use are), so going back is a request to caption again too.
        let back = try await run(["--set", "extract.images.caption.revision=1"])
        #expect((back["captions_made"] ?? 0) >= 2, "\(back.values)")
    }

    @Test("a picture whose caption fails: the document is indexed with its text, the failure counted and named")
    func failedPictureKeepsTheDocument() async throws {
        let ws = try Workspace("pictures-fail")
        defer { ws.cleanUp() }
        try Self.add(ws, ["docx"])
        let server = try await StandInServer.launch(script: "vision_standin.py")
        // A 400 the model answers (not retried): the picture's caption fails.
        try await ImageCaptionCLITests.control(server, #"{"fail_count": 1, "fail_status": 400}"#)
        let target = ws.target("t")
        let result = try await ws.sluice(
            ws.runArguments(target, Self.settings(server)),
            environment: [ImageCaptionCLITests.keyVariable: "unused"],
            timeout: .seconds(180)
        )
        #expect(result.exitCode == 0, "\(result)")
        let records = try Export.records(try await ws.export(target))
        #expect(records.map(\.text).joined().contains("Moorings are let by the season"), "the text is indexed")
        #expect(!records.contains { $0.text.contains("Picture:") })
        #expect(
            records.allSatisfy {
                $0.metadata["pictures_failed"] == 1 && $0.metadata["pictures_captioned"] == 0
                    && ($0.metadata["picture_caption_failed"]?.description.contains("word/media/") ?? false)
            },
            "\(records.first?.metadata ?? [:])"
        )
    }

    /// The pictures of a PDF are decoded by poppler in the extract worker processes (`extract.isolate`, on by
    /// default), as its text is read: a picture that crashes poppler costs the document's captions, not the
    /// run. The crash is the debug build's hook (`SLUICE_DEBUG_WORKER_PICTURE_CRASH`): a real invalid write
    /// in the worker, only while it decodes the pictures of the file named.
    @Test(
        "a PDF picture that crashes poppler: only the worker dies; the document is indexed with its text, the crash named"
    )
    func crashingPictureCostsOnlyItsCaption() async throws {
        let ws = try Workspace("pictures-crash")
        defer { ws.cleanUp() }
        try Self.add(ws, ["docx", "pdf"])
        let server = try await StandInServer.launch(script: "vision_standin.py")
        let target = ws.target("t")
        let result = try await ws.sluice(
            ws.runArguments(target, Self.settings(server)),
            environment: [
                ImageCaptionCLITests.keyVariable: "unused", "SLUICE_DEBUG_WORKER_PICTURE_CRASH": "pictures.pdf",
            ],
            timeout: .seconds(180)
        )
        #expect(result.exitCode == 0, "\(result)")
        #expect(try await ws.status(target).documents == ["indexed": 2])
        let records = try Export.records(try await ws.export(target))
        let pdf = records.filter { $0.documentKey == "pictures.pdf" }
        #expect(!pdf.isEmpty && !pdf.contains { $0.text.contains("Picture:") }, "\(pdf.map(\.text))")
        #expect(
            pdf.allSatisfy {
                $0.metadata["pictures_failed"] == 1
                    && ($0.metadata["picture_caption_failed"]?.description.contains("signal 11") ?? false)
            },
            "\(pdf.first?.metadata ?? [:])"
        )
        // The DOCX's picture, read in this process, is captioned: the run went on.
        #expect(
            records.contains { $0.documentKey == "pictures.docx" && $0.text.contains("Picture: A wide sandy beach") }
        )
        let wire = try await ImageCaptionCLITests.stats(server)
        #expect(wire["requests"] as? Int == 1, "only the DOCX's picture is sent: \(wire)")
    }
}
