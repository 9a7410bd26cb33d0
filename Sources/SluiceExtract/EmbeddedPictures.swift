import Foundation
import SluiceCore

/// The pictures inside a document that `extract.images.caption.pictures` captions: a PDF's page images
/// (poppler-glib), a DOCX's or PPTX's media parts (``OfficePictures``).
package enum EmbeddedPictures {
    /// The pictures `selection` takes from the document at `path` (its bytes `bytes`), read by the extractor
    /// named `extractor` (`pdf`, `docx`, `pptx`; another has none). Blocking: call it on the extract
    /// executor's threads.
    package static func list(
        _ bytes: [UInt8],
        path: String,
        extractor: String,
        zip: PipelineConfiguration.Extract.ZIP,
        selection: PictureSelection
    ) throws -> PictureSelection.Listing {
        guard extractor == "pdf" else {
            return try OfficePictures.list(bytes, extractor: extractor, limits: zip, selection: selection)
        }
        let document = try PDFDocument(path: path)
        var listing = PictureSelection.Listing()
        for page in 0..<document.pageCount {
            try document.pictures(onPage: page, selection: selection, into: &listing)
        }
        return listing
    }
}
