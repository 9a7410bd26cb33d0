import Foundation
import SluiceCore
import SluiceTesting
import Testing

@testable import SluiceExtract

/// OpenDocument text: samples/odt/xz-lists.odt (LibreOffice 7.4's `soffice --headless --convert-to odt` of
/// samples/docx/xz-lists.docx) must read as the DOCX it came from; Tests/SluiceExtractTests/Fixtures/
/// xz-notes.odt (the same conversion of a pandoc DOCX, scripts/make-samples.sh) has a title, an author,
/// a footnote and text in four scripts.
@Suite struct ODTExtractorTests {
    static let notes = DocumentSamples.root.deletingLastPathComponent()
        .appendingPathComponent("Tests/SluiceExtractTests/Fixtures/xz-notes.odt")

    static func input(_ bytes: [UInt8], name: String = "doc.odt") -> ExtractionInput {
        ExtractionInput(key: name, fileURL: URL(fileURLWithPath: "/tmp/\(name)"), bytes: bytes)
    }

    @Test func headingsListsAndTablesAsTheDOCXTheyCameFrom() throws {
        let (extractor, text) = try DocumentSamples.extract("odt/xz-lists.odt")
        #expect(extractor == "odt")
        #expect(text.metadata["format"] == "odt")
        let docx = try DocumentSamples.extract("docx/xz-lists.docx").text
        #expect(text.sections.map(\.headingPath) == docx.sections.map(\.headingPath))
        #expect(text.sections.map(\.text) == docx.sections.map(\.text))
        let steps = try #require(text.sections.first { $0.headingPath == ["Using xz", "Steps"] })
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

    @Test func metadataNotesAndEveryScript() throws {
        let bytes = Array(try Data(contentsOf: Self.notes))
        let (extractor, text) = try DocumentSamples.extract(Self.input(bytes, name: "notes.bin"))
        #expect(extractor == "odt")
        #expect(text.metadata["title"] == "XZ Utils notes")
        #expect(text.metadata["author"] == "Lasse Collin")
        // The title and author paragraphs come first, without a heading, as the DOCX reads.
        #expect(text.sections[0].text == "XZ Utils notes\n\nLasse Collin", "\(text.sections[0].text)")
        #expect(
            text.sections.map(\.headingPath) == [
                [], ["Compressing with xz"], ["Compressing with xz", "Presets"], ["Notes"],
            ]
        )
        #expect(text.sections[1].text.contains("multiple filters[1] and integrity checks."))
        #expect(
            text.sections[1].text.contains(
                "“naïve” café-style prose — with ‘quotes’ — and test in Ελληνικά, Русский and 日本語."
            )
        )
        #expect(text.sections[2].text.hasSuffix("1. Pick a preset from -0 to -9.\n2. Add -e for the extreme variant."))
        #expect(
            text.sections[3].text
                == "# Notes\n\n[1] LZMA2 is the default filter; BCJ filters improve compression of executables."
        )
    }

    /// The kind is the `mimetype` entry's, stored first as the specification requires; templates read as
    /// their documents; other OpenDocument kinds (drawings, formulas) and a deflated entry are not taken.
    @Test(arguments: [
        ("application/vnd.oasis.opendocument.text", true, OpenDocumentPackage.Kind.text),
        ("application/vnd.oasis.opendocument.text-template", true, .text),
        ("application/vnd.oasis.opendocument.spreadsheet", true, .spreadsheet),
        ("application/vnd.oasis.opendocument.presentation-template", true, .presentation),
        ("application/vnd.oasis.opendocument.graphics", true, nil),
        ("application/vnd.oasis.opendocument.textual", true, nil),
        ("application/vnd.oasis.opendocument.text", false, nil),
    ])
    func theKindIsTheStoredMimetypes(type: String, stored: Bool, kind: OpenDocumentPackage.Kind?) {
        var zip = ZIPWriter()
        zip.add("mimetype", type, stored: stored)
        zip.add("content.xml", "<x/>")
        #expect(OpenDocumentPackage.kind(of: zip.finish()) == kind, "\(type)")
    }
}
