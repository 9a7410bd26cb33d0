import Foundation
import SluiceCore
import SluiceExtract
import Testing

/// The pictures inside documents (Tests/SluiceExtractTests/Fixtures/pictures.{docx,pptx,pdf}, made by
/// scripts/make-picture-fixtures.py with LibreOffice): each holds a 240×160 drawing, a 16×16 icon and a
/// 480×3 rule.
@Suite struct EmbeddedPicturesTests {
    static let fixtures = Samples.root.deletingLastPathComponent()
        .appendingPathComponent("Tests/SluiceExtractTests/Fixtures")

    static func list(_ format: String, minSide: Int = 100, max: Int = 20) throws -> PictureSelection.Listing {
        let url = fixtures.appendingPathComponent("pictures.\(format)")
        return try EmbeddedPictures.list(
            Array(Data(contentsOf: url)),
            path: url.path,
            extractor: format,
            zip: PipelineConfiguration.Extract.ZIP(),
            selection: PictureSelection(minSidePixels: minSide, maxCount: max)
        )
    }

    @Test("the drawing is taken, the icon and the rule are under the minimum size", arguments: ["docx", "pptx", "pdf"])
    func onlyPicturesAboveTheMinimum(format: String) throws {
        let listing = try Self.list(format)
        #expect(
            listing.pictures.map(\.size) == [PictureSize(width: 240, height: 160)],
            "\(listing.pictures.map(\.name))"
        )
        #expect(listing.small == 2 && listing.overLimit == 0)
        let picture = try #require(listing.pictures.first)
        #expect(PictureSize(of: picture.bytes) == picture.size, "the bytes sent are a picture of that size")
        switch format {
        case "docx":
            // After its paragraph's text, or the nearest before it: the picture has a paragraph of its own.
            #expect(
                picture.place
                    == .after(
                        words: "the pier is the one most visitors remember.".split(separator: " ").map(String.init)
                    )
            )
            #expect(picture.name.hasPrefix("word/media/"))
        case "pptx":
            #expect(picture.place == .page(2) && picture.name.hasPrefix("ppt/media/"))
        default:
            #expect(picture.place == .page(1) && picture.name == "page 1 image 2", "\(picture.name)")
            #expect(FormatSniffer.sniff(picture.bytes) == .png)
        }
    }

    @Test(
        "a lower minimum takes the icon; the rule stays out; the limit counts the rest",
        arguments: ["docx", "pptx", "pdf"]
    )
    func minimumAndLimit(format: String) throws {
        let all = try Self.list(format, minSide: 10)
        #expect(
            Set(all.pictures.map(\.size)) == [PictureSize(width: 16, height: 16), PictureSize(width: 240, height: 160)]
        )
        #expect(all.small == 1)
        let one = try Self.list(format, minSide: 10, max: 1)
        // Past the limit a picture is counted, not read (so not sized either).
        #expect(one.pictures.count == 1 && one.overLimit >= 1 && one.overLimit + one.small == 2, "\(one)")
    }

    @Test("sizes from the headers of PNG, JPEG, GIF and WebP; none for TIFF and BMP")
    func pictureSizes() throws {
        for (name, size) in [
            ("xz-faq-page.png", PictureSize(width: 2250, height: 1250)),
            ("xz-faq-page.jpg", PictureSize(width: 2250, height: 1250)),
            ("xz-faq-heading.gif", PictureSize(width: 2250, height: 330)),
        ] {
            #expect(PictureSize(of: Array(try Data(contentsOf: Samples.url("images/\(name)")))) == size, "\(name)")
        }
        let webp = PictureSize(of: Array(try Data(contentsOf: Samples.url("images/xz-faq-heading.webp"))))
        #expect(webp == PictureSize(width: 2250, height: 330))
        #expect(PictureSize(of: Array(try Data(contentsOf: Samples.url("images/xz-faq-page.tiff")))) == nil)
        #expect(PictureSize(of: Array(try Data(contentsOf: Samples.url("images/xz-faq-heading.bmp")))) == nil)
        #expect(PictureSize(of: [0x89, 0x50, 0x4E, 0x47]) == nil, "a header cut short")
    }
}
