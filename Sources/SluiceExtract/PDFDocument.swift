import CPoppler
import Foundation
import SluiceCore

/// An open PDF file, read with poppler-glib.
///
/// The document handle is freed in `deinit` only. Poppler documents are not safe to use from two threads
/// at once, so every call into poppler takes the instance's lock; share one instance across tasks only
/// for light use and give each worker its own instance for throughput.
public final class PDFDocument: @unchecked Sendable {
    /// The `PopplerDocument *`; owned, released with `g_object_unref` in `deinit`.
    let handle: OpaquePointer
    let lock = NSLock()

    /// The file the document was opened from.
    public let path: String

    /// Opens the PDF at `path`.
    ///
    /// - Parameters:
    ///   - path: A file path, absolute or relative to the current directory.
    ///   - password: The user or owner password of an encrypted document.
    /// - Throws: ``SluiceError`` with code `extractionFailed` when the file is missing, unreadable or
    ///   damaged, and `encrypted` when it is encrypted and the password is missing or wrong.
    public init(path: String, password: String? = nil) throws {
        let absolute = URL(fileURLWithPath: path).standardizedFileURL.path
        // Open before any stored property is set: a throw here leaves no half-built instance whose
        // deinit would run.
        self.handle = try Self.open(absolutePath: absolute, password: password)
        self.path = absolute
    }

    deinit {
        g_object_unref(gpointer(handle))
    }

    /// The number of pages.
    public var pageCount: Int {
        lock.withLock { Int(poppler_document_get_n_pages(handle)) }
    }

    /// The title from the document's information dictionary or XMP metadata, if it has a non-empty one.
    public var title: String? {
        lock.withLock { Self.takeString(poppler_document_get_title(handle)) }
    }

    /// The author from the document's information dictionary or XMP metadata, if it has a non-empty one.
    public var author: String? {
        lock.withLock { Self.takeString(poppler_document_get_author(handle)) }
    }

    /// The text of one page, in reading order as poppler lays it out.
    ///
    /// - Parameter index: A zero-based page index, `0..<pageCount`.
    /// - Returns: The page text; empty for a page without text (for example a scanned image).
    /// - Throws: ``SluiceError`` with code `extractionFailed` when the page cannot be loaded.
    public func text(ofPage index: Int) throws -> String {
        try lock.withLock {
            let count = Int(poppler_document_get_n_pages(handle))
            guard index >= 0, index < count else {
                throw SluiceError(.extractionFailed, "page \(index) out of range 0..<\(count) in \(path)")
            }
            guard let page = poppler_document_get_page(handle, Int32(index)) else {
                throw SluiceError(.extractionFailed, "cannot load page \(index) of \(path)")
            }
            defer { g_object_unref(gpointer(page)) }
            return Self.takeString(poppler_page_get_text(page)) ?? ""
        }
    }

    // MARK: - C helpers

    /// Opens a document and returns the owned handle, or throws with poppler's message.
    private static func open(absolutePath: String, password: String?) throws -> OpaquePointer {
        var error: UnsafeMutablePointer<GError>?
        guard let uri = g_filename_to_uri(absolutePath, nil, &error) else {
            throw takeError(&error, path: absolutePath, fallback: "cannot make a file URI")
        }
        defer { g_free(uri) }
        guard let document = poppler_document_new_from_file(uri, password, &error) else {
            throw takeError(&error, path: absolutePath, fallback: "cannot open PDF")
        }
        return document
    }

    /// Converts (and frees) a `GError` into a ``SluiceError``.
    private static func takeError(
        _ error: inout UnsafeMutablePointer<GError>?,
        path: String,
        fallback: String
    ) -> SluiceError {
        guard let gerror = error else { return SluiceError(.extractionFailed, "\(fallback): \(path)") }
        defer {
            g_error_free(gerror)
            error = nil
        }
        let message = gerror.pointee.message.map { String(cString: $0) } ?? fallback
        if gerror.pointee.domain == poppler_error_quark(),
            gerror.pointee.code == Int32(POPPLER_ERROR_ENCRYPTED.rawValue)
        {
            return SluiceError(.encrypted, "PDF is encrypted and needs a password: \(path) (\(message))")
        }
        return SluiceError(.extractionFailed, "\(message): \(path)")
    }

    /// Copies a `gchar *` owned by the caller into a `String` and frees it; nil or empty gives nil.
    private static func takeString(_ pointer: UnsafeMutablePointer<gchar>?) -> String? {
        guard let pointer else { return nil }
        defer { g_free(pointer) }
        let string = String(cString: pointer)
        return string.isEmpty ? nil : string
    }
}
