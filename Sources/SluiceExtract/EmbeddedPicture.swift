import SluiceCore

/// A picture inside a document (a PDF's page image, a DOCX's or PPTX's media part) chosen to be captioned,
/// and where it sits, so that its caption is placed there (`extract.images.caption.pictures`).
package struct EmbeddedPicture: Sendable, Hashable {
    /// Where the picture sits in the document's text.
    package enum Place: Sendable, Hashable {
        /// On a page (PDF) or slide (PPTX), 1-based: the caption goes at the end of its text.
        case page(Int)
        /// In a DOCX: after the paragraph ending with these words (the picture's own paragraph, or the
        /// nearest one before it with text).
        case after(words: [String])
        /// Before any text (a DOCX that opens with a picture).
        case start
    }

    /// The picture's file (PNG, JPEG, GIF or WebP: a PDF's images are written as PNG).
    package var bytes: [UInt8]
    /// The picture's name, as failures name it: the part (`word/media/image2.png`), or `page 3 image 2`.
    package var name: String
    package var size: PictureSize
    package var place: Place

    package init(bytes: [UInt8], name: String, size: PictureSize, place: Place) {
        self.bytes = bytes
        self.name = name
        self.size = size
        self.place = place
    }
}

/// Which of a document's pictures are captioned, and what became of the others.
package struct PictureSelection: Sendable, Hashable {
    /// A picture whose shorter side is under this many pixels is left out.
    package var minSidePixels: Int
    /// The most pictures taken from one document, in its order.
    package var maxCount: Int

    package init(minSidePixels: Int, maxCount: Int) {
        self.minSidePixels = minSidePixels
        self.maxCount = maxCount
    }

    /// The pictures chosen, with counts of those left out.
    package struct Listing: Sendable, Hashable {
        package var pictures: [EmbeddedPicture] = []
        /// Pictures under the minimum size, or of a format the vision APIs do not take (EMF, WMF, SVG, TIFF).
        package var small = 0
        /// Pictures past ``PictureSelection/maxCount``.
        package var overLimit = 0

        package init() {}

        /// Whether the selection is full: pictures after this one are counted, not read.
        func full(_ selection: PictureSelection) -> Bool { pictures.count >= selection.maxCount }

        /// Takes `bytes` if they are a picture of a format the vision APIs take, at least the minimum size.
        mutating func consider(
            _ bytes: [UInt8],
            name: String,
            place: EmbeddedPicture.Place,
            selection: PictureSelection
        ) {
            guard let size = PictureSize(of: bytes), size.shorterSide >= selection.minSidePixels else {
                small += 1
                return
            }
            guard !full(selection) else {
                overLimit += 1
                return
            }
            pictures.append(EmbeddedPicture(bytes: bytes, name: name, size: size, place: place))
        }
    }
}
