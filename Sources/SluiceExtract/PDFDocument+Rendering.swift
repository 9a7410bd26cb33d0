import CPopplerGlib
import Foundation
import SluiceCore

extension PDFDocument {
    /// A page rendered to 8-bit gray pixels, row by row (0 black … 255 white).
    package struct GrayImage: Sendable {
        package var pixels: [UInt8]
        package var width: Int
        package var height: Int
        package var dpi: Int
    }

    /// Renders one page for OCR through poppler-glib and cairo: white background, poppler's printing path
    /// (no annotations' widgets), converted from cairo's RGB24 (bytes B, G, R, X) to gray. The first page
    /// rendered in a process loads poppler-glib and cairo (see ``loadRenderingLibrary()``).
    ///
    /// - Parameters:
    ///   - index: A zero-based page index.
    ///   - dpi: The resolution; 300 suits Tesseract. Pages larger than 100 megapixels at that
    ///     resolution are rendered at a lower one rather than exhaust memory.
    /// - Throws: ``SluiceError`` with code `extractionFailed` when the page cannot be loaded or cairo
    ///   cannot allocate the surface, and `configuration` when poppler-glib cannot be loaded.
    package func renderGray(page index: Int, dpi: Int) throws -> GrayImage {
        try lock.withLock {
            guard let page = sluice_poppler_document_get_page(try rendererLocked(), Int32(index)) else {
                throw SluiceError(.extractionFailed, "cannot load page \(index + 1) of \(path) for rendering")
            }
            defer { sluice_poppler_page_release(page) }
            var widthPoints = 0.0
            var heightPoints = 0.0
            sluice_poppler_page_get_size(page, &widthPoints, &heightPoints)
            var scale = Double(dpi) / 72
            let megapixels = widthPoints * heightPoints * scale * scale / 1e6
            if megapixels > 100 { scale *= (100 / megapixels).squareRoot() }
            let width = max(1, Int((widthPoints * scale).rounded(.up)))
            let height = max(1, Int((heightPoints * scale).rounded(.up)))

            guard let surface = sluice_cairo_image_surface_create_rgb24(Int32(width), Int32(height)),
                sluice_cairo_surface_ok(surface) != 0
            else {
                throw SluiceError(
                    .extractionFailed,
                    "cannot allocate a \(width)×\(height) surface for page \(index + 1)"
                )
            }
            defer { sluice_cairo_surface_destroy(surface) }
            guard let context = sluice_cairo_create(surface) else {
                throw SluiceError(.extractionFailed, "cannot create a cairo context for page \(index + 1)")
            }
            sluice_cairo_set_source_rgb(context, 1, 1, 1)
            sluice_cairo_paint(context)
            sluice_cairo_scale(context, scale, scale)
            sluice_poppler_page_render_for_printing(page, context)
            sluice_cairo_destroy(context)
            sluice_cairo_surface_flush(surface)

            guard let data = sluice_cairo_image_surface_get_data(surface) else {
                throw SluiceError(.extractionFailed, "cairo returned no pixels for page \(index + 1)")
            }
            let stride = Int(sluice_cairo_image_surface_get_stride(surface))
            var gray = [UInt8](repeating: 255, count: width * height)
            gray.withUnsafeMutableBufferPointer { out in
                for y in 0..<height {
                    let row = data + y * stride
                    for x in 0..<width {
                        let pixel = row + 4 * x
                        // ITU-R BT.601 luma with integer weights (sum 256).
                        let luma = (29 * Int(pixel[0]) + 150 * Int(pixel[1]) + 77 * Int(pixel[2])) >> 8
                        out[y * width + x] = UInt8(luma)
                    }
                }
            }
            return GrayImage(pixels: gray, width: width, height: height, dpi: Int((scale * 72).rounded()))
        }
    }
}
