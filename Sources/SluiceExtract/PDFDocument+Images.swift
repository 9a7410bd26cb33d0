import CPopplerGlib
import Foundation
import SluiceCore

extension PDFDocument {
    /// The raster images a page places, as OCR's decision needs them (docs/EXTRACTORS.md, "Which pages are
    /// OCR'd").
    package struct PageImages: Sendable, Hashable {
        /// How many images the page draws (inline images and stencil masks included).
        package var count: Int
        /// The share of the page (its crop box) the images cover, 0 (none) … 1: their placed areas clipped to
        /// the page and summed, capped at 1 (images that overlap count twice, which errs toward OCR).
        package var coverage: Double
    }

    /// Where the page at `index` places raster images, through poppler-glib
    /// (`poppler_page_get_image_mapping`): the page's content is interpreted, and the images' placed
    /// rectangles are listed without their pixels being decoded. A blocking call, like rendering: it runs
    /// where the page's extraction runs (the extract executor's threads, or a worker process).
    ///
    /// - Parameter index: A zero-based page index.
    /// - Throws: ``SluiceError`` with code `extractionFailed` when the page cannot be loaded, and
    ///   `configuration` when poppler-glib cannot be loaded.
    package func images(onPage index: Int) throws -> PageImages {
        try lock.withLock {
            guard let page = sluice_poppler_document_get_page(try rendererLocked(), Int32(index)) else {
                throw SluiceError(.extractionFailed, "cannot load page \(index + 1) of \(path) to list its images")
            }
            defer { sluice_poppler_page_release(page) }
            var count: Int32 = 0
            let coverage = sluice_poppler_page_image_coverage(page, &count)
            return PageImages(count: Int(count), coverage: coverage)
        }
    }
}

extension PDFDocument {
    /// The pictures the page at `index` places, decoded by poppler-glib (`poppler_page_get_image`) and
    /// written as PNG (cairo), those `selection` takes added to `listing` (placed on the page). A blocking
    /// call: it runs on the extract executor's threads.
    ///
    /// - Parameter index: A zero-based page index.
    package func pictures(
        onPage index: Int,
        selection: PictureSelection,
        into listing: inout PictureSelection.Listing
    ) throws {
        try lock.withLock {
            guard let page = sluice_poppler_document_get_page(try rendererLocked(), Int32(index)) else {
                throw SluiceError(.extractionFailed, "cannot load page \(index + 1) of \(path) to list its images")
            }
            defer { sluice_poppler_page_release(page) }
            let count = Int(sluice_poppler_page_image_ids(page, nil, 0))
            guard count > 0 else { return }
            var ids = [Int32](repeating: 0, count: count)
            _ = sluice_poppler_page_image_ids(page, &ids, Int32(count))
            for (number, id) in ids.enumerated() {
                guard !listing.full(selection) else {
                    listing.overLimit += 1
                    continue
                }
                guard let surface = sluice_poppler_page_get_image(page, id) else {
                    listing.small += 1  // nothing poppler can draw (a stencil mask)
                    continue
                }
                defer { sluice_cairo_surface_destroy(surface) }
                let width = Int(sluice_cairo_image_surface_get_width(surface))
                let height = Int(sluice_cairo_image_surface_get_height(surface))
                // Too small: not written as PNG at all.
                guard min(width, height) >= selection.minSidePixels else {
                    listing.small += 1
                    continue
                }
                var length = 0
                guard let png = sluice_cairo_surface_png(surface, &length) else {
                    throw SluiceError(.extractionFailed, "cannot write image \(number + 1) of page \(index + 1) as PNG")
                }
                defer { free(png) }
                let bytes = Array(UnsafeBufferPointer(start: png, count: length))
                listing.consider(
                    bytes,
                    name: "page \(index + 1) image \(number + 1)",
                    place: .page(index + 1),
                    selection: selection
                )
            }
        }
    }
}
