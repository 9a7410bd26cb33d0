import Foundation
import SluiceCore
import Testing

@testable import SluiceExtract

/// OpenDocument presentations: Tests/SluiceExtractTests/Fixtures/xz-slides.odp is LibreOffice 7.4's
/// `soffice --headless --convert-to odp` of xz-slides.pptx; it must read as the deck it came from.
@Suite struct ODPExtractorTests {
    static let fixture = DocumentSamples.root.deletingLastPathComponent()
        .appendingPathComponent("Tests/SluiceExtractTests/Fixtures/xz-slides.odp")

    static func input(_ bytes: [UInt8], name: String = "deck.odp") -> ExtractionInput {
        ExtractionInput(key: name, fileURL: URL(fileURLWithPath: "/tmp/\(name)"), bytes: bytes)
    }

    @Test func slidesWithTitlesTablesAndNotesLikePPTX() throws {
        let bytes = Array(try Data(contentsOf: Self.fixture))
        let (extractor, text) = try DocumentSamples.extract(Self.input(bytes, name: "deck.bin"))
        #expect(extractor == "odp")
        #expect(text.metadata["format"] == "odp")
        #expect(text.metadata["title"] == "XZ Utils in brief")
        #expect(text.metadata["author"] == "Lasse Collin")
        #expect(text.metadata["slides"] == "4")
        // LibreOffice wrote the slides in the presentation's order: as the PPTX reads.
        let pptx = try DocumentSamples.extract(try PPTXExtractorTests.input()).text
        #expect(text.sections.map(\.page) == [1, 2, 3, 4])
        #expect(text.sections.map(\.headingPath) == pptx.sections.map(\.headingPath))
        #expect(text.sections.map(\.text) == pptx.sections.map(\.text))
        #expect(
            text.sections[2].text == """
                # What XZ is

                A general-purpose data compression format
                The successor of LZMA Utils

                Notes: The letters XZ mean nothing: they come from the file suffix .xz.
                """
        )
    }
}
