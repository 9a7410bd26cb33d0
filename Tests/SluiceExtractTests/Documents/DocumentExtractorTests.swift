import Foundation
import SluiceCore
import SluiceExtract
import Testing

@Suite struct DocumentExtractorTests {
    @Test func docxFromPandocKeepsHeadingsListsAndTables() throws {
        let (extractor, text) = try DocumentSamples.extract("docx/zstd-README.docx")
        #expect(extractor == "docx")
        #expect(text.metadata["title"] == "Zstandard README")
        #expect(text.metadata["author"] == "Meta Platforms")
        let full = text.fullText
        #expect(
            full.contains("Zstandard, or `zstd` as short version")
                || full.contains("Zstandard, or zstd as short version")
        )
        // Headings become sections with heading paths and Markdown heading lines.
        let benchmarks = try #require(text.sections.first { $0.headingPath.last == "Benchmarks" })
        #expect(benchmarks.text.hasPrefix("## Benchmarks"))
        #expect(benchmarks.headingPath == ["Benchmarks"])
        #expect(
            text.sections.contains {
                $0.headingPath == ["Build instructions", "cmake"] && $0.text.hasPrefix("### cmake")
            }
        )
        // The benchmark table: a row per line, cells joined by " | ".
        #expect(full.contains("Compressor name | Ratio | Compression | Decompress."))
        #expect(full.contains("zstd 1.5.1 -1 | 2.887 | 530 MB/s | 1700 MB/s"))
        // List items.
        #expect(full.split(separator: "\n").contains { $0.hasPrefix("- ") })
    }

    @Test func docxNumberedAndNestedListsAndTables() throws {
        let text = try DocumentSamples.extract("docx/xz-lists.docx").text
        let steps = try #require(text.sections.first { $0.headingPath == ["Using xz", "Steps"] })
        // "Using xz" has no text of its own: its heading line stays at the top of the next section.
        #expect(
            steps.text == """
                # Using xz

                ## Steps

                1. Compress the file with xz.
                2. Check the result:
                  - run xz --list on it;
                  - compare the sizes.
                3. Remove the original.
                """
        )
        let formats = try #require(text.sections.first { $0.headingPath == ["Using xz", "Formats"] })
        #expect(formats.text == "## Formats\n\nSuffix | Format | Notes\n.xz | XZ |\n.lzma | LZMA_Alone | legacy")
    }

    /// Footnotes and endnotes (Tests/SluiceExtractTests/Fixtures, made by scripts/make-samples.sh): a marker
    /// where the body refers to a note, numbered in the order of reference as Word shows them (the note ids
    /// in the file are 20–22), and the notes after the body under a heading of their own.
    @Test(arguments: [
        ("xz-footnotes.docx", "Footnotes", ["1", "2", "3"]), ("xz-endnotes.docx", "Endnotes", ["i", "ii", "iii"]),
    ])
    func docxNotesFollowTheBodyWithMarkers(file: String, heading: String, labels: [String]) throws {
        let url = DocumentSamples.root.deletingLastPathComponent()
            .appendingPathComponent("Tests/SluiceExtractTests/Fixtures/\(file)")
        let input = ExtractionInput(key: file, fileURL: url, bytes: Array(try Data(contentsOf: url)))
        let (extractor, text) = try DocumentSamples.extract(input)
        #expect(extractor == "docx")
        let full = text.fullText
        let (one, two, three) = (labels[0], labels[1], labels[2])
        #expect(full.contains("supports multiple filters[\(one)] and integrity checks"))
        #expect(full.contains("compared to compression.[\(two)]"))
        #expect(full.contains("CRC64 is the default check[\(three)] of the xz command line tool."))
        let notes = try #require(text.sections.first { $0.headingPath == [heading] })
        #expect(
            notes.text == """
                # \(heading)

                [\(one)] LZMA2 is the default filter; BCJ filters improve compression of executables.

                [\(two)] The memory usage of decompression depends on the dictionary size used when compressing.

                [\(three)] Use \u{2013}check=sha256 for a cryptographic hash.
                """
        )
        #expect(text.sections.last?.headingPath == [heading])  // (pandoc typeset the note's "--" as an en dash)
        // The separators (notes with a w:type) are not notes.
        #expect(!notes.text.contains("[4]") && !notes.text.contains("[iv]"))
    }

    /// The parts a DOCX's body relies on are found through its relationships (`word/_rels/document.xml.rels`),
    /// not by their usual names: here the footnotes and styles parts renamed, as other producers may name them,
    /// and the heading styles' ids changed, so that only the styles part says they are headings.
    @Test func docxPartsAreFoundThroughTheDocumentsRelationships() throws {
        let url = DocumentSamples.root.deletingLastPathComponent()
            .appendingPathComponent("Tests/SluiceExtractTests/Fixtures/xz-footnotes.docx")
        let names = ["word/footnotes.xml": "word/notes/at-foot.xml", "word/styles.xml": "word/look.xml"]
        let renamed = try ZIPFixture.rewrite(Array(try Data(contentsOf: url))) { name, data in
            var text = String(decoding: data, as: UTF8.self)
            switch name {
            case "word/_rels/document.xml.rels":
                text = text.replacingOccurrences(of: "Target=\"footnotes.xml\"", with: "Target=\"notes/at-foot.xml\"")
                    .replacingOccurrences(of: "Target=\"styles.xml\"", with: "Target=\"/word/look.xml\"")
            case "word/document.xml", "word/styles.xml":
                text = text.replacingOccurrences(of: "\"Heading1\"", with: "\"Part\"")
                    .replacingOccurrences(of: "\"Heading2\"", with: "\"Section\"")
            default: return (names[name] ?? name, data)
            }
            return (names[name] ?? name, Data(text.utf8))
        }
        let text = try DocumentSamples.extract(ExtractionInput(key: "renamed.docx", fileURL: url, bytes: renamed)).text
        #expect(text.fullText.contains("supports multiple filters[1] and integrity checks"))
        #expect(text.sections.contains { $0.headingPath == ["Footnotes"] })
        // The styles part (by its names `heading 1`, `heading 2`) still makes headings of the headings.
        #expect(text.sections.contains { $0.headingPath == ["Compressing with xz", "Integrity checks"] })
    }

    @Test func endnoteNumbersAreRoman() {
        #expect(
            [1, 2, 3, 4, 9, 14, 40, 90, 400, 1994, 3999, 4000].map(DOCXNotes.roman) == [
                "i", "ii", "iii", "iv", "ix", "xiv", "xl", "xc", "cd", "mcmxciv", "mmmcmxcix", "4000",
            ]
        )
    }

    @Test func docxIsRecognisedByContentNotName() throws {
        var input = try DocumentSamples.input("docx/pip-dependency-resolution.docx")
        input.fileURL = URL(fileURLWithPath: "/tmp/resolution.bin")
        let (extractor, text) = try DocumentSamples.extract(input)
        #expect(extractor == "docx")
        #expect(text.fullText.contains("backtracking"))
    }

    @Test func htmlDropsBoilerplateAndHonoursLatin1() throws {
        let (extractor, text) = try DocumentSamples.extract("html/xz-faq-latin1.html")
        #expect(extractor == "html")
        #expect(text.metadata["title"] == "XZ Utils FAQ (Latin-1 copy)")
        let full = text.fullText
        #expect(full.contains("Café naïve résumé: XZ Utils is free general-purpose data compression software."))
        for boilerplate in [
            "trackingScriptText", "font-family", "Site header", "Home navigation", "Sidebar", "Copyright footer",
        ] {
            #expect(!full.contains(boilerplate), "\(boilerplate) should be dropped")
        }
        #expect(full.contains("- .xz is the native format\n- .lzma is the legacy format"))
        #expect(full.contains("Tool | Purpose\nxz | compress\nunxz | decompress"))
        #expect(full.contains("[image: XZ Utils logo]"))
        let formats = try #require(text.sections.first { $0.headingPath == ["XZ Utils FAQ", "Formats"] })
        #expect(formats.text.hasPrefix("## Formats"))
    }

    @Test func anArticleHeaderIsKeptButThePageHeaderIsNot() throws {
        let html = """
            <!DOCTYPE html><html><body><header>Site name</header><main><article>
            <header><h1>Release notes</h1><p>By the team</p></header>
            <p>Body text.</p><footer>Filed under news</footer></article></main><footer>Page footer</footer></body></html>
            """
        let text = try DocumentSamples.extract(DocumentSamples.input(named: "page.html", html)).text
        #expect(text.fullText == "# Release notes\n\nBy the team\n\nBody text.\n\nFiled under news")
        #expect(text.sections.map(\.headingPath) == [["Release notes"]])
    }

    @Test func deeplyNestedHTMLDoesNotOverflow() throws {
        let depth = 100_000
        let html =
            "<!DOCTYPE html><html><body>" + String(repeating: "<div>", count: depth) + "deep text"
            + String(repeating: "</div>", count: depth) + "<p>after</p></body></html>"
        do {
            let text = try DocumentSamples.extract(DocumentSamples.input(named: "deep.html", html)).text
            #expect(text.fullText.contains("after"))
        } catch let error as SluiceError {
            #expect(error.code == .malformed || error.code == .emptyDocument, "\(error)")
        }
    }

    @Test("50,000-deep HTML keeps the text under the deep nesting (no empty-document, no overflow)")
    func fiftyThousandDeepHTMLKeepsItsText() throws {
        let depth = 50_000
        let html =
            "<!DOCTYPE html><html><body><p>before</p>" + String(repeating: "<div>", count: depth)
            + "deep <b>text</b> here"
            + String(repeating: "<span>", count: 700) + "<script>dropped()</script>deeper"
            + String(repeating: "</span>", count: 700)
            + String(repeating: "</div>", count: depth) + "<p>after</p></body></html>"
        let text = try DocumentSamples.extract(DocumentSamples.input(named: "deep.html", html)).text
        #expect(text.fullText.contains("before"))
        #expect(text.fullText.contains("deep text here"))
        #expect(text.fullText.contains("deeper"))
        #expect(!text.fullText.contains("dropped"))
        #expect(text.fullText.contains("after"))
    }

    @Test func htmlFromDebianDocs() throws {
        let (extractor, text) = try DocumentSamples.extract("html/enscript-FAQ.html")
        #expect(extractor == "html")
        #expect(text.metadata["title"] == "GNU Enscript Frequently Asked Questions (FAQ)")
        #expect(text.fullText.contains("This FAQ assumes that you are using the latest version of GNU Enscript"))
        // Permalink marks and skip links are not text.
        let node = try DocumentSamples.extract("html/nodejs-path.html").text
        #expect(node.sections.contains { $0.headingPath == ["Path", "path.basename(path[, suffix])"] })
        #expect(!node.fullText.contains("Skip to content"))
        let declared = try DocumentSamples.extract("html/json-c-README.html").text
        #expect(declared.metadata["charset"] == "windows-1252")
        #expect(declared.sections.contains { $0.headingPath == ["JSON-C - A JSON implementation in C", "Overview"] })
    }

    @Test func markdownWithHTMLIsStillMarkdown() throws {
        let input = DocumentSamples.input(named: "page.md", "<html>\n# Title\n\nText.\n")
        #expect(try DocumentSamples.extract(input).extractor == "text")
    }

    @Test func jsonIsSniffedButTextFilesStayText() throws {
        #expect(
            try DocumentSamples.extract(DocumentSamples.input(named: "export", "[{\"a\": \"b\"}]")).extractor == "json"
        )
        #expect(
            try DocumentSamples.extract(DocumentSamples.input(named: "notes.txt", "[1] a footnote\n")).extractor
                == "text"
        )
        #expect(
            try DocumentSamples.extract(DocumentSamples.input(named: "setup", "[section]\nkey = value\n")).extractor
                == "text"
        )
    }

    @Test func jsonStringsWithTheirPaths() throws {
        let (extractor, text) = try DocumentSamples.extract("json/iso-4217-currencies.json")
        #expect(extractor == "json")
        #expect(text.fullText.contains("$[\"4217\"][0].name: UAE Dirham"))
        // A section per currency, under the one array that holds them.
        #expect(text.sections.count == 181)
        #expect(text.sections.first?.headingPath == ["$[\"4217\"]", "$[\"4217\"][0]"])
        #expect(
            text.sections.first?.text
                == "$[\"4217\"][0].alpha_3: AED\n$[\"4217\"][0].name: UAE Dirham\n$[\"4217\"][0].numeric: 784"
        )
    }

    @Test func jsonFieldsSelectWhatIsIndexed() throws {
        var configuration = PipelineConfiguration.Extract()
        configuration.json.fields = ["desc"]
        let text = try DocumentSamples.extract("json/nodejs-path.json", configuration: configuration).text
        let lines = text.fullText.split(separator: "\n").filter { $0.hasPrefix("$") }
        #expect(!lines.isEmpty)
        #expect(lines.allSatisfy { $0.contains(".desc: ") })
        configuration.json.fields = ["$.modules[*].methods[*].name"]
        let names = try DocumentSamples.extract("json/nodejs-path.json", configuration: configuration).text.fullText
        #expect(names.contains("$.modules[0].methods[0].name: basename"))
        #expect(!names.contains(".desc: "))
    }

    @Test func jsonLinesKeepTheLineNumber() throws {
        let (extractor, text) = try DocumentSamples.extract("json/iso-639-2-languages.jsonl")
        #expect(extractor == "json")
        #expect(text.metadata["format"] == "jsonl")
        #expect(text.sections[0].metadata["line"] == "1")
        #expect(text.sections[0].text.contains("$.name: Afar"))
        #expect(text.sections.count == 487)
    }

    @Test func deepJSONFailsAtTheDepthLimit() throws {
        let error = try DocumentSamples.failure("bad/deep.json")
        #expect(error.code == .tooDeep)
        #expect(error.message.contains("deeper than 64 levels at line 1, column 65"))
    }

    @Test func aBadJSONLineIsNamed() throws {
        let error = try DocumentSamples.failure("bad/bad-line.jsonl")
        #expect(error.code == .malformed)
        #expect(error.message.contains("line 3, column 18"))
    }

    @Test func csvRowsWithHeaderNames() throws {
        let (extractor, text) = try DocumentSamples.extract("csv/debian-releases.csv")
        #expect(extractor == "csv")
        #expect(
            text.fullText.contains(
                "version: 1.1; codename: Buzz; series: buzz; created: 1993-08-16; release: 1996-06-17; eol: 1997-06-05"
            )
        )
        let packages = try DocumentSamples.extract("csv/packages.csv").text
        #expect(
            packages.fullText.contains(
                "package: iso-codes; summary: ISO language, territory, currency, script codes and their translations; description: This package provides the ISO 639, ISO 3166 and ISO 4217 lists, with their translations, as \"JSON\" files."
            )
        )
        let tsv = try DocumentSamples.extract("csv/iso-639-2-languages.tsv").text
        #expect(tsv.metadata["format"] == "tsv")
        #expect(tsv.fullText.hasPrefix("alpha_3: aar; alpha_2: aa; name: Afar"))
    }

    @Test func anUnclosedQuoteIsNamed() throws {
        let input = DocumentSamples.input(named: "broken.csv", "a,b\n1,\"open\n2,3\n")
        #expect(throws: SluiceError.self) { try DocumentSamples.extract(input) }
        do {
            _ = try DocumentSamples.extract(input)
        } catch let error as SluiceError {
            #expect(error.code == .malformed)
            #expect(error.message.contains("starts on line 2 is never closed"))
        }
    }

    @Test func sourceCodeIsText() throws {
        let input = DocumentSamples.input(named: "main.swift", "// Entry point\nprint(\"hello\")\n")
        let (extractor, text) = try DocumentSamples.extract(input)
        #expect(extractor == "text")
        #expect(text.metadata == ["format": "source", "language": "swift"])
    }

    @Test func zipBombFailsWhileInflating() throws {
        let error = try DocumentSamples.failure("bad/zip-bomb.docx")
        #expect(error.code == .zipBomb)
        #expect(error.message.contains("word/document.xml inflates more than 200 times its compressed size"))
        var configuration = PipelineConfiguration.Extract()
        configuration.zip.maxCompressionRatio = 10_000
        configuration.zip.maxInflatedMB = 8
        let bySize = try DocumentSamples.failure("bad/zip-bomb.docx", configuration: configuration)
        #expect(bySize.code == .zipBomb)
        #expect(bySize.message.contains("inflates past extract.zip.max_inflated_mb (8 MB)"))
    }

    @Test func entityBombIsRefusedBeforeParsing() throws {
        let error = try DocumentSamples.failure("bad/entity-bomb.docx")
        #expect(error.code == .xmlEntities)
        #expect(error.message.contains("word/document.xml declares a DTD (<!DOCTYPE at byte 38)"))
    }
}
