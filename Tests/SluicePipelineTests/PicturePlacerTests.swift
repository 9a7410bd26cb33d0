import SluiceCore
import SluiceExtract
import Testing

@testable import SluicePipeline

/// Where a picture's caption goes in the document's sections (`extract.images.caption.pictures`).
@Suite struct PicturePlacerTests {
    static func words(_ text: String) -> [String] { text.split(separator: " ").map(String.init) }

    @Test("after the paragraph with the anchor words, whatever the white space; marked on its section")
    func afterParagraph() {
        var placer = PicturePlacer(sections: [
            TextSection(
                text: "# Harbour\n\nThe tide tables\nare printed.\n\nThe evening view.",
                headingPath: ["Harbour"]
            ),
            TextSection(text: "# Moorings\n\nLet by the season.", headingPath: ["Moorings"]),
        ])
        placer.place(
            "Picture: a sunset",
            named: "word/media/image2.png",
            at: .after(words: Self.words("tables are printed."))
        )
        #expect(
            placer.sections[0].text
                == "# Harbour\n\nThe tide tables\nare printed.\n\nPicture: a sunset\n\nThe evening view."
        )
        #expect(
            placer.sections[0].metadata == ["text_source": "text,caption", "picture_captions": "word/media/image2.png"]
        )
        #expect(placer.sections[1].metadata.isEmpty)
        // The next picture's paragraph is searched from there on; one at a section's end ends the section.
        placer.place("Picture: boats", named: "word/media/image3.png", at: .after(words: ["season."]))
        #expect(placer.sections[1].text == "# Moorings\n\nLet by the season.\n\nPicture: boats")
    }

    @Test("on a page or slide: at the end of its last section; at the start; words not found: where the last went")
    func pagesStartAndNotFound() {
        var placer = PicturePlacer(sections: [
            TextSection(text: "one", page: 1), TextSection(text: "two a", page: 2), TextSection(text: "two b", page: 2),
            TextSection(text: "four", page: 4),
        ])
        placer.place("Picture: x", named: "p2", at: .page(2))
        #expect(placer.sections[2].text == "two b\n\nPicture: x")
        placer.place("Picture: y", named: "p3", at: .page(3))  // a slide without text: the one before
        #expect(placer.sections[2].text == "two b\n\nPicture: x\n\nPicture: y")
        #expect(placer.sections[2].metadata["picture_captions"] == "p2,p3")
        placer.place("Picture: z", named: "s", at: .start)
        #expect(placer.sections[0].text == "Picture: z\n\none")
        placer.place("Picture: w", named: "n", at: .after(words: ["nowhere"]))
        #expect(placer.sections[0].text == "Picture: z\n\none\n\nPicture: w")
    }
}
