import Foundation
import SluiceCore
import Testing

/// DOCX, HTML, JSON, JSON Lines and CSV samples through the built `sluice` binary: heading paths and
/// JSON Lines line numbers reach the stored records (`sluice export`), and each bad structured input
/// fails alone with its reason.
@Suite(.serialized)
struct DocumentFormatsCLITests {
    static let samples = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("samples")

    @Test(
        "structured samples: heading paths and line numbers reach the exported records; bombs and deep JSON fail alone"
    )
    func structuredDocumentsEndToEnd() async throws {
        let ws = try Workspace("documents")
        defer { ws.cleanUp() }
        let good = [
            "docx/zstd-README.docx", "html/xz-faq-latin1.html", "json/iso-4217-currencies.json",
            "json/iso-639-2-languages.jsonl", "csv/debian-releases.csv",
        ]
        let bad = ["bad/zip-bomb.docx", "bad/entity-bomb.docx", "bad/deep.json", "bad/bad-line.jsonl"]
        for file in good + bad {
            let destination = ws.corpus.appendingPathComponent(file)
            try FileManager.default.createDirectory(
                at: destination.deletingLastPathComponent(),
                withIntermediateDirectories: true
            )
            try FileManager.default.copyItem(at: Self.samples.appendingPathComponent(file), to: destination)
        }
        let main = ws.target("main")
        try await ws.run(
            main,
            ["--set", "source.include=[\"**/*\"]", "--set", "chunk.strategy=structured"],
            expecting: 2
        )

        let records = try Export.records(try await ws.export(main))
        #expect(Set(records.map(\.documentKey)) == Set(good))
        let docx = records.filter { $0.documentKey == "docx/zstd-README.docx" }
        // The structured chunker merges the short subsections under their common heading.
        #expect(
            docx.contains {
                $0.metadata["headings"] == .strings(["Build instructions"]) && $0.text.contains("### cmake")
            }
        )
        let html = records.filter { $0.documentKey == "html/xz-faq-latin1.html" }
        #expect(
            html.contains {
                $0.metadata["headings"]?.text.hasPrefix("XZ Utils FAQ") == true && $0.text.contains("Café")
            }
        )
        #expect(html.allSatisfy { $0.metadata["title"] == "XZ Utils FAQ (Latin-1 copy)" })
        #expect(docx.allSatisfy { $0.metadata["title"] == "Zstandard README" })
        let lines = records.filter { $0.documentKey == "json/iso-639-2-languages.jsonl" }
        #expect(lines.contains { $0.metadata["line"] == 1 && $0.text.contains("$.name: Afar") })

        let failures = try await ws.status(main).failures
        #expect(Set(failures.keys) == Set(bad), "\(failures)")
        #expect(failures["bad/zip-bomb.docx"]?.hasPrefix("zip-bomb:") == true, "\(failures)")
        #expect(failures["bad/entity-bomb.docx"]?.hasPrefix("xml-entities:") == true, "\(failures)")
        #expect(failures["bad/deep.json"]?.hasPrefix("too-deep:") == true, "\(failures)")
        #expect(failures["bad/bad-line.jsonl"]?.contains("line 3, column 18") == true, "\(failures)")
    }

    @Test("slides, sheets and chapters: pages, headings, sheet rows and chapters reach the exported records")
    func officeAndEPUBEndToEnd() async throws {
        let ws = try Workspace("office")
        defer { ws.cleanUp() }
        let fixtures = Self.samples.deletingLastPathComponent().appendingPathComponent(
            "Tests/SluiceExtractTests/Fixtures"
        )
        for file in ["xz-slides.pptx", "xz-facts.xlsx", "xz-guide.epub"] {
            try FileManager.default.copyItem(
                at: fixtures.appendingPathComponent(file),
                to: ws.corpus.appendingPathComponent(file)
            )
        }
        let main = ws.target("main")
        try await ws.run(main, ["--set", "source.include=[\"**/*\"]", "--set", "chunk.strategy=structured"])
        let records = try Export.records(try await ws.export(main))
        let slides = records.filter { $0.documentKey == "xz-slides.pptx" }
        #expect(slides.contains { $0.metadata["page"] == 3 && $0.text.contains("Notes: The letters XZ mean nothing") })
        #expect(slides.allSatisfy { $0.metadata["format"] == "pptx" && $0.metadata["slides"] == 4 })
        let sheets = records.filter { $0.documentKey == "xz-facts.xlsx" }
        #expect(
            sheets.contains {
                $0.metadata["sheet"] == "Releases" && $0.metadata["line"] == 2
                    && $0.metadata["headings"] == .strings(["Releases"]) && $0.text.contains("Released: 2010-10-23")
            }
        )
        let chapters = records.filter { $0.documentKey == "xz-guide.epub" }
        #expect(
            chapters.contains { $0.metadata["chapter"] == "EPUB/text/ch002.xhtml" && $0.text.contains("LZMA_Alone") }
        )
        #expect(chapters.allSatisfy { $0.metadata["author"] == "Lasse Collin" && $0.metadata["chapters"] == 3 })
    }

    @Test("OpenDocument and RTF: headings, sheets, slides and metadata reach the records; bad ones fail alone")
    func openDocumentAndRTFEndToEnd() async throws {
        let ws = try Workspace("opendocument")
        defer { ws.cleanUp() }
        let fixtures = Self.samples.deletingLastPathComponent().appendingPathComponent(
            "Tests/SluiceExtractTests/Fixtures"
        )
        for (source, name) in [
            (Self.samples.appendingPathComponent("odt/xz-lists.odt"), "xz-lists.odt"),
            (Self.samples.appendingPathComponent("rtf/xz-lists.rtf"), "xz-lists.rtf"),
            (fixtures.appendingPathComponent("xz-facts.ods"), "xz-facts.ods"),
            (fixtures.appendingPathComponent("xz-slides.odp"), "xz-slides.odp"),
            (fixtures.appendingPathComponent("xz-notes.rtf"), "xz-notes.rtf"),
        ] {
            try FileManager.default.copyItem(at: source, to: ws.corpus.appendingPathComponent(name))
        }
        try FileManager.default.createDirectory(
            at: ws.corpus.appendingPathComponent("bad"),
            withIntermediateDirectories: true
        )
        let odt = try Data(contentsOf: Self.samples.appendingPathComponent("odt/xz-lists.odt"))
        try odt.prefix(odt.count / 2).write(to: ws.corpus.appendingPathComponent("bad/truncated.odt"))
        let deep = "{\\rtf1\\ansi " + String(repeating: "{", count: 5_000) + "x" + String(repeating: "}", count: 5_001)
        try Data(deep.utf8).write(to: ws.corpus.appendingPathComponent("bad/deep.rtf"))
        try Data(#"{\rtf1\ansi{\*\shppict{\pict\pngblip 89504e47}}\par}"#.utf8)
            .write(to: ws.corpus.appendingPathComponent("bad/picture.rtf"))

        let main = ws.target("main")
        try await ws.run(
            main,
            ["--set", "source.include=[\"**/*\"]", "--set", "chunk.strategy=structured"],
            expecting: 2
        )
        let records = try Export.records(try await ws.export(main))
        #expect(
            Set(records.map(\.documentKey))
                == ["xz-lists.odt", "xz-lists.rtf", "xz-facts.ods", "xz-slides.odp", "xz-notes.rtf"]
        )
        for key in ["xz-lists.odt", "xz-lists.rtf"] {
            let format = String(key.split(separator: ".").last!)
            #expect(
                records.contains {
                    $0.documentKey == key && $0.metadata["headings"]?.text.hasPrefix("Using xz") == true
                        && $0.text.contains(".lzma | LZMA_Alone | legacy")
                },
                "\(key)"
            )
            #expect(records.filter { $0.documentKey == key }.allSatisfy { $0.metadata["format"] == .string(format) })
        }
        #expect(
            records.contains {
                $0.documentKey == "xz-facts.ods" && $0.metadata["sheet"] == "Releases"
                    && $0.text.contains("Released: 2010-10-23")
            }
        )
        #expect(records.contains { $0.documentKey == "xz-slides.odp" && $0.metadata["page"] == 3 })
        #expect(
            records.filter { $0.documentKey == "xz-notes.rtf" }.allSatisfy {
                $0.metadata["title"] == "XZ Utils notes" && $0.metadata["author"] == "Lasse Collin"
            }
        )
        let failures = try await ws.status(main).failures
        #expect(Set(failures.keys) == ["bad/truncated.odt", "bad/deep.rtf", "bad/picture.rtf"], "\(failures)")
        #expect(failures["bad/truncated.odt"]?.hasPrefix("malformed:") == true, "\(failures)")
        #expect(failures["bad/deep.rtf"]?.hasPrefix("too-deep:") == true, "\(failures)")
        #expect(failures["bad/picture.rtf"]?.contains("no text") == true, "\(failures)")
    }
}
