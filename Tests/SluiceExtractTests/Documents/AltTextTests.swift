import Foundation
import SluiceCore
import SluiceExtract
import Testing

/// Pictures', charts' and diagrams' alternative text is read into the text as HTML's `alt` is
/// (`[image: …]`), where the drawing sits, in DOCX, PPTX, ODT and ODP; a blank one (a decorative picture)
/// adds nothing. The fixtures' pictures have none: the tests give them some.
@Suite struct AltTextTests {
    static func fixture(_ name: String) throws -> [UInt8] {
        let url = DocumentSamples.root.deletingLastPathComponent()
            .appendingPathComponent("Tests/SluiceExtractTests/Fixtures/\(name)")
        return Array(try Data(contentsOf: url))
    }

    static func extract(_ bytes: [UInt8], name: String) throws -> ExtractedText {
        try DocumentSamples.extract(
            ExtractionInput(key: name, fileURL: URL(fileURLWithPath: "/tmp/\(name)"), bytes: bytes)
        )
        .text
    }

    static func markers(_ text: ExtractedText) -> [String] {
        let full = text.fullText
        return full.ranges(of: "[image:").map { start in
            String(full[start.lowerBound...].prefix { $0 != "]" }) + "]"
        }
    }

    @Test func docxDrawingsDescriptionElseTitleWhereTheySit() throws {
        let bytes = try ZIPFixture.rewrite(try Self.fixture("pictures.docx"), part: "word/document.xml") {
            $0.replacingOccurrences(
                of: #"name="sunset" descr="""#,
                with: #"name="sunset" descr="  A red sunset&#10;over the harbour ""#
            )
            .replacingOccurrences(of: #"name="icon" descr="""#, with: #"name="icon" descr="" title="Harbour logo""#)
        }
        let text = try Self.extract(bytes, name: "pictures.docx")
        #expect(Self.markers(text) == ["[image: Harbour logo]", "[image: A red sunset over the harbour]"])
        // Without alternative text the same document reads as before: no marker at all.
        let plain = try Self.extract(try Self.fixture("pictures.docx"), name: "pictures.docx")
        #expect(Self.markers(plain).isEmpty)
        #expect(
            text.fullText.replacingOccurrences(of: #"\s*\[image: [^\]]*\]\s*"#, with: " ", options: .regularExpression)
                .split(whereSeparator: \.isWhitespace) == plain.fullText.split(whereSeparator: \.isWhitespace)
        )
    }

    @Test func pptxPicturesAndChartsOnTheirSlide() throws {
        let chart = """
            <p:graphicFrame><p:nvGraphicFramePr><p:cNvPr id="99" name="Chart 1" descr="Ferry passengers by month, \
            rising in summer"/><p:cNvGraphicFramePr/><p:nvPr/></p:nvGraphicFramePr><p:xfrm><a:off x="0" y="0"/>\
            <a:ext cx="1" cy="1"/></p:xfrm><a:graphic><a:graphicData \
            uri="http://schemas.openxmlformats.org/drawingml/2006/chart"/></a:graphic></p:graphicFrame></p:spTree>
            """
        var bytes = try ZIPFixture.rewrite(try Self.fixture("pictures.pptx"), part: "ppt/slides/slide1.xml") {
            $0.replacingOccurrences(
                of: #"name="icon" descr="""#,
                with: #"name="icon" descr="The harbour's anchor icon""#
            )
            .replacingOccurrences(of: "</p:spTree>", with: chart)
        }
        bytes = try ZIPFixture.rewrite(bytes, part: "ppt/slides/slide2.xml") {
            $0.replacingOccurrences(of: #"name="sunset" descr="""#, with: #"name="sunset" descr="   ""#)
        }
        let text = try Self.extract(bytes, name: "pictures.pptx")
        let first = try #require(text.sections.first { $0.page == 1 })
        #expect(first.text.contains("[image: The harbour's anchor icon]"))
        #expect(first.text.contains("[image: Ferry passengers by month, rising in summer]"))
        #expect(Self.markers(text).count == 2, "a blank description adds nothing: \(Self.markers(text))")
    }

    @Test func odtFramesInParagraphs() throws {
        let frame = """
            <draw:frame draw:name="Image1"><draw:image xlink:href="Pictures/none.png"/><svg:title>Logo</svg:title>\
            <svg:desc>A blue water drop</svg:desc></draw:frame>\
            <draw:frame draw:name="Box1"><draw:text-box><text:p>Boxed words</text:p></draw:text-box>\
            <svg:desc>A text box, not a picture</svg:desc></draw:frame>
            """
        let bytes = try ZIPFixture.rewrite(try Self.fixture("xz-notes.odt"), part: "content.xml") {
            $0.replacingOccurrences(
                of: #"<text:p text:style-name="First_20_Paragraph">"#,
                with: #"<text:p text:style-name="First_20_Paragraph">"# + frame
            )
        }
        let text = try Self.extract(bytes, name: "notes.odt")
        #expect(Self.markers(text) == ["[image: A blue water drop]"])
        #expect(text.fullText.contains("[image: A blue water drop] The .xz format supports multiple filters"))
        #expect(!text.fullText.contains("Boxed words"), "a text box in a paragraph is left out, as before")
    }

    @Test func odpPictureFramesOnTheirSlide() throws {
        let frame = """
            <draw:frame draw:name="Picture 1"><draw:image xlink:href="Pictures/none.png"><text:p/></draw:image>\
            <svg:title>Checks</svg:title></draw:frame></draw:page>
            """
        let bytes = try ZIPFixture.rewrite(try Self.fixture("xz-slides.odp"), part: "content.xml") { content in
            guard let end = content.range(of: "</draw:page>") else { return content }
            return content.replacingCharacters(in: end, with: frame)
        }
        let text = try Self.extract(bytes, name: "deck.odp")
        let first = try #require(text.sections.first { $0.page == 1 })
        #expect(first.text.hasSuffix("[image: Checks]"), "\(first.text)")
        #expect(Self.markers(text) == ["[image: Checks]"])
    }
}
