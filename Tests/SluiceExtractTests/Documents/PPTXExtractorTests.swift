import Foundation
import SluiceCore
import SluiceExtract
import Testing

/// PowerPoint decks: Tests/SluiceExtractTests/Fixtures/xz-slides.pptx, made by scripts/make-samples.sh with
/// pandoc (its presentation lists the fourth slide part second).
@Suite struct PPTXExtractorTests {
    static let fixture = DocumentSamples.root.deletingLastPathComponent()
        .appendingPathComponent("Tests/SluiceExtractTests/Fixtures/xz-slides.pptx")

    static func input(_ bytes: [UInt8]? = nil, name: String = "xz-slides.pptx") throws -> ExtractionInput {
        ExtractionInput(
            key: name,
            fileURL: URL(fileURLWithPath: "/tmp/\(name)"),
            bytes: try bytes ?? Array(Data(contentsOf: fixture))
        )
    }

    @Test func slidesInPresentationOrderWithTitlesTablesAndNotes() throws {
        let (extractor, text) = try DocumentSamples.extract(try Self.input())
        #expect(extractor == "pptx")
        #expect(text.metadata["format"] == "pptx")
        #expect(text.metadata["title"] == "XZ Utils in brief")
        #expect(text.metadata["author"] == "Lasse Collin")
        #expect(text.metadata["slides"] == "4")
        // One section per slide: the slide's number as its page, its title as its heading.
        #expect(text.sections.map(\.page) == [1, 2, 3, 4])
        #expect(
            text.sections.map(\.headingPath) == [
                ["XZ Utils in brief"], ["Integrity checks"], ["What XZ is"], ["Memory at each preset"],
            ]
        )
        #expect(
            text.sections.map(\.text) == [
                "# XZ Utils in brief\n\nLasse Collin",
                "# Integrity checks\n\nCRC64 is the default check of the xz command line tool.",
                """
                # What XZ is

                A general-purpose data compression format
                The successor of LZMA Utils

                Notes: The letters XZ mean nothing: they come from the file suffix .xz.
                """,
                """
                # Memory at each preset

                Preset | Compression | Decompression
                -0 | 3 MiB | 1 MiB
                -9 | 674 MiB | 65 MiB
                """,
            ]
        )
        // The notes slide's number placeholder is not text of the notes.
        #expect(!text.sections[2].text.contains("Notes: 2") && !text.sections[2].text.hasSuffix("\n3"))
    }

    @Test func isRecognisedByContentNotName() throws {
        let (extractor, text) = try DocumentSamples.extract(try Self.input(name: "deck.bin"))
        #expect(extractor == "pptx")
        #expect(text.sections.count == 4)
    }

    /// Damaged or hostile decks fail alone, with the reason: the DOCX limits hold for every Office part.
    @Test func badDecksFailWithAReason() throws {
        let bytes = Array(try Data(contentsOf: Self.fixture))
        // Truncated: the central directory is gone.
        let truncated = try DocumentSamples.failure(try Self.input(Array(bytes.prefix(bytes.count / 2))))
        #expect([.malformed, .unsupportedFormat].contains(truncated.code), "\(truncated)")
        // A limit on inflation below the deck's size.
        var tight = PipelineConfiguration.Extract()
        tight.docx.maxInflatedMB = 0.01
        let bomb = try DocumentSamples.failure(try Self.input(), configuration: tight)
        #expect(bomb.code == .zipBomb)
        // A slide part that declares a DTD is refused before parsing.
        let hostile = try Self.rewrite(bytes, part: "ppt/slides/slide2.xml") {
            $0.replacingOccurrences(of: "<p:sld ", with: "<!DOCTYPE p:sld [<!ENTITY a \"aaaa\">]><p:sld ")
        }
        #expect(try DocumentSamples.failure(try Self.input(hostile)).code == .xmlEntities)
        // A deck without slides has no text.
        let empty = try Self.rewrite(bytes, part: "ppt/presentation.xml") {
            $0.replacingOccurrences(of: #"<p:sldIdLst>.*</p:sldIdLst>"#, with: "", options: .regularExpression)
        }
        #expect(try DocumentSamples.failure(try Self.input(empty)).code == .emptyDocument)
    }

    /// The deck with one part's text changed (through Python's zipfile, which the test machines have).
    static func rewrite(_ bytes: [UInt8], part: String, _ change: (String) -> String) throws -> [UInt8] {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pptx-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = directory.appendingPathComponent("in.pptx")
        let target = directory.appendingPathComponent("out.pptx")
        let replacement = directory.appendingPathComponent("part.xml")
        try Data(bytes).write(to: source)
        let original = try Self.unzip(source, part: part)
        try change(original).write(to: replacement, atomically: true, encoding: .utf8)
        let script = """
            import sys, zipfile
            src, dst, name, path = sys.argv[1:]
            with zipfile.ZipFile(src) as z, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as out:
                for info in z.infolist():
                    data = open(path, "rb").read() if info.filename == name else z.read(info.filename)
                    out.writestr(info.filename, data)
            """
        try Self.python(["-c", script, source.path, target.path, part, replacement.path])
        return Array(try Data(contentsOf: target))
    }

    /// The archive with every part passed through `change` (name and bytes in, name and bytes out), rezipped by
    /// Python's zipfile.
    static func rewriteArchive(_ bytes: [UInt8], _ change: (String, Data) throws -> (String, Data)) throws -> [UInt8] {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("zip-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = directory.appendingPathComponent("in.zip")
        try Data(bytes).write(to: source)
        let listing = directory.appendingPathComponent("names.txt")
        try Self.python([
            "-c",
            "import sys, zipfile; open(sys.argv[2], 'w').write('\\n'.join(zipfile.ZipFile(sys.argv[1]).namelist()))",
            source.path, listing.path,
        ])
        var index = 0
        for name in try String(contentsOf: listing, encoding: .utf8).split(separator: "\n").map(String.init) {
            let extracted = directory.appendingPathComponent("part")
            try Self.python([
                "-c",
                "import sys, zipfile; open(sys.argv[3], 'wb').write(zipfile.ZipFile(sys.argv[1]).read(sys.argv[2]))",
                source.path, name, extracted.path,
            ])
            let (newName, data) = try change(name, try Data(contentsOf: extracted))
            try data.write(to: directory.appendingPathComponent("\(index).bin"))
            try newName.write(to: directory.appendingPathComponent("\(index).name"), atomically: true, encoding: .utf8)
            index += 1
        }
        let target = directory.appendingPathComponent("out.zip")
        let script = """
            import sys, zipfile
            folder, count, target = sys.argv[1], int(sys.argv[2]), sys.argv[3]
            with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as out:
                for i in range(count):
                    out.writestr(open(f"{folder}/{i}.name").read(), open(f"{folder}/{i}.bin", "rb").read())
            """
        try Self.python(["-c", script, directory.path, String(index), target.path])
        return Array(try Data(contentsOf: target))
    }

    static func unzip(_ archive: URL, part: String) throws -> String {
        let out = archive.deletingLastPathComponent().appendingPathComponent("original.xml")
        try Self.python([
            "-c", "import sys, zipfile; open(sys.argv[3], 'wb').write(zipfile.ZipFile(sys.argv[1]).read(sys.argv[2]))",
            archive.path, part, out.path,
        ])
        return try String(contentsOf: out, encoding: .utf8)
    }

    static func python(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = arguments
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
    }
}
