import CPopplerGlib
import CPopplerText
import Foundation
import SluiceCore

/// An open PDF file: its text layer and information through poppler's text output device, and rendering
/// (for OCR) through poppler-glib, which is loaded into the process at the first page rendered (CPopplerGlib).
///
/// Page text comes from one text output device per document (`PopplerTextLayer.h`), the way `pdftotext`
/// extracts it, and is the same text. poppler-glib's `poppler_page_get_text` builds a device for every page
/// and with it every ICC colour transform the page uses; on Debian's manuals that cost up to 35% more CPU
/// per page. poppler-glib is opened only when a page is rendered.
///
/// The handles are freed in `deinit` only. Poppler documents are not safe to use from two threads at once,
/// so every call into poppler takes the instance's lock; share one instance across tasks only for light use
/// and give each worker its own instance for throughput.
package final class PDFDocument: @unchecked Sendable {
    /// The `SluicePDFTextLayer *`; owned, closed in `deinit`.
    let textLayer: OpaquePointer
    /// The `PopplerDocument *` for rendering, opened on first use; owned, released in `deinit`.
    private var renderer: OpaquePointer?
    private let password: String?
    let lock = NSLock()
    /// What poppler opens: `path`, or the `/proc/self/fd/N` of ``file``.
    private let openPath: String
    /// The descriptor the document was opened through, kept open for the renderer (see ``init(file:password:)``).
    private let file: DocumentFile?

    /// The file the document was opened from.
    package let path: String

    /// Opens the PDF at `path`.
    ///
    /// - Parameters:
    ///   - path: A file path, absolute or relative to the current directory.
    ///   - password: The user or owner password of an encrypted document.
    /// - Throws: ``SluiceError`` with code `extractionFailed` when the file is missing, unreadable or
    ///   damaged, and `encrypted` when it is encrypted and the password is missing or wrong.
    package init(path: String, password: String? = nil) throws {
        let absolute = URL(fileURLWithPath: path).standardizedFileURL.path
        // Open before any stored property is set: a throw here leaves no half-built instance whose
        // deinit would run.
        self.textLayer = try Self.openTextLayer(absolutePath: absolute, shownAs: absolute, password: password)
        self.path = absolute
        self.openPath = absolute
        self.file = nil
        self.password = password
    }

    /// Opens the PDF of an open ``DocumentFile``: poppler reads it through `/proc/self/fd/N` (for the text
    /// layer now, for rendering later), so both see that very file, whatever is at its path by then.
    ///
    /// - Throws: as ``init(path:password:)``.
    package init(file: DocumentFile, password: String? = nil) throws {
        let absolute = URL(fileURLWithPath: file.path).standardizedFileURL.path
        self.textLayer = try Self.openTextLayer(absolutePath: file.procPath, shownAs: absolute, password: password)
        self.path = absolute
        self.openPath = file.procPath
        self.file = file
        self.password = password
    }

    deinit {
        sluice_pdf_text_close(textLayer)
        if let renderer { sluice_poppler_document_release(renderer) }
    }

    /// The number of pages.
    package var pageCount: Int {
        lock.withLock { Int(sluice_pdf_text_page_count(textLayer)) }
    }

    /// The title from the document's information dictionary, if it has a non-empty one.
    package var title: String? {
        lock.withLock { Self.takeString(sluice_pdf_text_info(textLayer, "Title")) }
    }

    /// The author from the document's information dictionary, if it has a non-empty one.
    package var author: String? {
        lock.withLock { Self.takeString(sluice_pdf_text_info(textLayer, "Author")) }
    }

    /// The text of one page, in reading order as poppler lays it out (as `pdftotext` prints it).
    ///
    /// - Parameter index: A zero-based page index, `0..<pageCount`.
    /// - Returns: The page text; empty for a page without text (for example a scanned image).
    /// - Throws: ``SluiceError`` with code `extractionFailed` when the page cannot be loaded.
    package func text(ofPage index: Int) throws -> String {
        try lock.withLock {
            let count = Int(sluice_pdf_text_page_count(textLayer))
            guard index >= 0, index < count else {
                throw SluiceError(.extractionFailed, "page \(index) out of range 0..<\(count) in \(path)")
            }
            var length = 0
            guard let text = sluice_pdf_text_page(textLayer, Int32(index), &length) else {
                throw SluiceError(.extractionFailed, "cannot extract the text of page \(index + 1) of \(path)")
            }
            return String(decoding: UnsafeRawBufferPointer(start: text, count: length), as: UTF8.self)
        }
    }

    /// The poppler-glib document, opened on first use (loading poppler-glib into the process if it is not yet).
    /// Call with the lock held.
    func rendererLocked() throws -> OpaquePointer {
        if let renderer { return renderer }
        try Self.loadRenderingLibrary()
        let opened = try Self.openRenderer(absolutePath: openPath, shownAs: path, password: password)
        renderer = opened
        return opened
    }

    // MARK: - C helpers

    /// Opens the text layer, or throws with the reason poppler gives.
    private static func openTextLayer(
        absolutePath: String,
        shownAs shown: String,
        password: String?
    ) throws -> OpaquePointer {
        var status = SLUICE_PDF_TEXT_OK
        if let layer = sluice_pdf_text_open(absolutePath, password, &status) { return layer }
        switch status {
        case SLUICE_PDF_TEXT_ENCRYPTED:
            throw SluiceError(.encrypted, "PDF is encrypted and needs a password: \(shown)")
        case SLUICE_PDF_TEXT_UNREADABLE:
            let reason = access(absolutePath, F_OK) != 0 ? "no such file" : "cannot open the file"
            throw SluiceError(.extractionFailed, "\(reason): \(shown)")
        case SLUICE_PDF_TEXT_DAMAGED:
            throw SluiceError(.extractionFailed, "PDF document is damaged (or not a PDF): \(shown)")
        default:
            throw SluiceError(.extractionFailed, "cannot load the PDF document: \(shown)")
        }
    }

    /// Loads poppler-glib (and with it cairo and glib) into this process if it is not yet (once; see
    /// CPopplerGlib.h). Only rendering needs it: text, page count, title and author come from poppler's core.
    /// - Throws: ``SluiceError`` with code `configuration` when it cannot be loaded; the document that needed a
    ///   page rendered fails with it (and is tried again on the next run), other documents are unaffected.
    package static func loadRenderingLibrary() throws {
        guard sluice_poppler_glib_load() == 0 else {
            let reason = sluice_poppler_glib_load_error().map { String(cString: $0) } ?? "unknown error"
            throw SluiceError(
                .configuration,
                "cannot load poppler-glib to render PDF pages for OCR: \(reason) (install libpoppler-glib8)"
            )
        }
    }

    /// poppler-glib's version (`poppler_get_version`), loading it; nil when it cannot be loaded.
    package static var renderingLibraryVersion: String? { sluice_poppler_glib_version().map { String(cString: $0) } }

    /// Opens a document with poppler-glib and returns the owned handle, or throws with poppler's message.
    private static func openRenderer(
        absolutePath: String,
        shownAs shown: String,
        password: String?
    ) throws -> OpaquePointer {
        var status = SLUICE_POPPLER_GLIB_OK
        var cMessage: UnsafeMutablePointer<CChar>?
        if let document = sluice_poppler_document_open(absolutePath, password, &status, &cMessage) {
            return document
        }
        let fallback = status == SLUICE_POPPLER_GLIB_NO_URI ? "cannot make a file URI" : "cannot open PDF"
        let message = cMessage.map { String(cString: $0) } ?? fallback
        free(cMessage)
        if status == SLUICE_POPPLER_GLIB_ENCRYPTED {
            throw SluiceError(.encrypted, "PDF is encrypted and needs a password: \(shown) (\(message))")
        }
        throw SluiceError(.extractionFailed, "\(message): \(shown)")
    }

    /// Copies a C string allocated with malloc into a `String` and frees it; nil or empty gives nil.
    private static func takeString(_ pointer: UnsafeMutablePointer<CChar>?) -> String? {
        guard let pointer else { return nil }
        defer { free(pointer) }
        let string = String(cString: pointer)
        return string.isEmpty ? nil : string
    }
}
