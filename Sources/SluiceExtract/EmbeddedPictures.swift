import Foundation
import SluiceCore

/// The pictures inside a document that `extract.images.caption.pictures` captions: a PDF's page images
/// (poppler-glib), a DOCX's or PPTX's media parts (``OfficePictures``).
package enum EmbeddedPictures {
    /// The pictures `selection` takes from the document `input`, read by `extractor`: a PDF read in the
    /// extract worker processes (``IsolatedExtractor``, `extract.isolate`) has its pictures decoded there
    /// too, so that a picture that crashes or hangs poppler costs the document's captions, not the run;
    /// otherwise they are read here. Blocking: call it on the extract executor's threads.
    package static func list(
        _ input: ExtractionInput,
        extractor: any Extractor,
        zip: PipelineConfiguration.Extract.ZIP,
        selection: PictureSelection
    ) throws -> PictureSelection.Listing {
        if let isolated = extractor as? IsolatedExtractor, isolated.kind == .pdf {
            return try isolated.pictures(of: input, selection: selection)
        }
        return try list(
            input.bytes,
            path: input.fileURL.path,
            extractor: extractor.name,
            zip: zip,
            selection: selection
        )
    }

    /// The pictures `selection` takes from the document at `path` (its bytes `bytes`), read by the extractor
    /// named `extractor` (`pdf`, `docx`, `pptx`; another has none), in this process. Blocking: call it on the
    /// extract executor's threads.
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
