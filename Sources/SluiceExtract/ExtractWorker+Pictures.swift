import Foundation
import SluiceCore

extension ExtractWorker {
    /// A `pdf-pictures` request: the pictures of `document` that captions take, decoded by poppler and
    /// written as PNG here, in the worker, so that a picture that crashes or hangs poppler costs the
    /// document's captions, not the run (docs/EXTRACTORS.md, "Pictures inside documents").
    static func pictures(
        of document: PDFDocument,
        request: ExtractWorkerProtocol.Request
    ) throws -> ExtractWorkerProtocol.PictureList {
        pictureHooks(request)
        let selection = PictureSelection(minSidePixels: request.minSidePixels ?? 0, maxCount: request.count ?? 0)
        var listing = PictureSelection.Listing()
        for page in 0..<document.pageCount {
            try document.pictures(onPage: page, selection: selection, into: &listing)
        }
        return ExtractWorkerProtocol.PictureList(
            pictures: listing.pictures.map {
                guard case .page(let page) = $0.place else { preconditionFailure("a PDF's picture is on a page") }
                return ExtractWorkerProtocol.Picture(png: Data($0.bytes), name: $0.name, page: page)
            },
            small: listing.small,
            overLimit: listing.overLimit
        )
    }

    /// A test hook, compiled into debug builds only: a worker that crashes (SIGSEGV) while it decodes the
    /// pictures of a file whose path contains the value of `SLUICE_DEBUG_WORKER_PICTURE_CRASH` (its text
    /// is read as usual), as poppler would on a picture it chokes on.
    private static func pictureHooks(_ request: ExtractWorkerProtocol.Request) {
        #if DEBUG
        let environment = ProcessInfo.processInfo.environment
        if let marker = environment["SLUICE_DEBUG_WORKER_PICTURE_CRASH"], !marker.isEmpty,
            request.path.contains(marker)
        {
            // A real invalid write (see `debugHooks`: a raised signal is handled by Swift's backtracer).
            UnsafeMutablePointer<Int>(bitPattern: 0x10)!.pointee = 0x4BAD
        }
        #endif
    }
}
