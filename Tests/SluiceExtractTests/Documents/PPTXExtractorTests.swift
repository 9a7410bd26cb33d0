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
        tight.zip.maxInflatedMB = 0.01
        let bomb = try DocumentSamples.failure(try Self.input(), configuration: tight)
        #expect(bomb.code == .zipBomb)
        // A slide part that declares a DTD is refused before parsing.
        let hostile = try ZIPFixture.rewrite(bytes, part: "ppt/slides/slide2.xml") {
            $0.replacingOccurrences(of: "<p:sld ", with: "<!DOCTYPE p:sld [<!ENTITY a \"aaaa\">]><p:sld ")
        }
        #expect(try DocumentSamples.failure(try Self.input(hostile)).code == .xmlEntities)
        // A deck without slides has no text.
        let empty = try ZIPFixture.rewrite(bytes, part: "ppt/presentation.xml") {
            $0.replacingOccurrences(of: #"<p:sldIdLst>.*</p:sldIdLst>"#, with: "", options: .regularExpression)
        }
        #expect(try DocumentSamples.failure(try Self.input(empty)).code == .emptyDocument)
    }
}
