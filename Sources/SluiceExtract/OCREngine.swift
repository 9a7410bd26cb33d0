import CTesseract
import Foundation
import SluiceCore

/// One Tesseract engine (`TessBaseAPI`) with its languages loaded.
///
/// Loading costs about 125 MB for the first engine and 25 MB for each further one; recognition is
/// single-threaded inside an engine, so calls on one instance are serialized by its lock. For parallel
/// OCR create one engine per worker thread.
///
/// - Important: Debian's libtesseract uses OpenMP. Start the process with `OMP_THREAD_LIMIT=1`
///   (setting it at run time is too late), or OCR costs several times the CPU.
package final class OCREngine: @unchecked Sendable {
    /// The `TessBaseAPI *`; owned, released with `TessBaseAPIDelete` in `deinit`.
    private let handle: OpaquePointer
    private let lock = NSLock()

    /// The languages loaded, such as `["eng"]`.
    package let languages: [String]
    /// The `tessdata` folder the language files were read from.
    package let dataPath: String

    /// The default `tessdata` folder: `TESSDATA_PREFIX` if set, else Debian's tesseract 5 location.
    package static var defaultDataPath: String {
        if let prefix = ProcessInfo.processInfo.environment["TESSDATA_PREFIX"], !prefix.isEmpty {
            return prefix
        }
        return "/usr/share/tesseract-ocr/5/tessdata"
    }

    /// Creates an engine and loads `languages` from `dataPath`.
    ///
    /// - Parameters:
    ///   - languages: Tesseract language codes; each needs `<code>.traineddata` in `dataPath`.
    ///   - dataPath: The `tessdata` folder itself (not its parent).
    /// - Throws: ``SluiceError`` with code `configuration` when a language file is missing or Tesseract
    ///   refuses to load it.
    ///   - pageSegmentationMode: Tesseract's page segmentation mode, 0–13 as the CLI's `--psm`
    ///     (default 3, fully automatic).
    package init(
        languages: [String] = ["eng"],
        dataPath: String = OCREngine.defaultDataPath,
        pageSegmentationMode: Int = 3
    ) throws {
        guard (0...13).contains(pageSegmentationMode) else {
            throw SluiceError(.configuration, "OCR page segmentation mode must be 0…13, got \(pageSegmentationMode)")
        }
        // Create and initialize before any stored property is set, so a throw leaves no instance behind
        // whose deinit would free the handle a second time.
        self.handle = try Self.makeEngine(
            languages: languages,
            dataPath: dataPath,
            mode: Int32(pageSegmentationMode)
        )
        self.languages = languages
        self.dataPath = dataPath
    }

    deinit {
        sluice_tess_delete(handle)
    }

    /// Recognizes the text in an image file.
    ///
    /// - Parameters:
    ///   - path: An image leptonica can read (PNG, JPEG, TIFF, PNM, …).
    ///   - resolution: The scan resolution in dpi, used when the file does not record one (default 300).
    /// - Returns: The UTF-8 text and Tesseract's mean word confidence, 0–100.
    /// - Throws: ``SluiceError`` with code `unreadable` for an image that cannot be decoded, or
    ///   `extractionFailed` when recognition fails.
    package func recognize(imageAt path: String, resolution: Int = 300) throws -> (text: String, confidence: Int) {
        guard let pix = sluice_pix_read(path) else {
            let reason = FileManager.default.fileExists(atPath: path) ? "cannot decode image" : "no such file"
            throw SluiceError(.unreadable, "\(reason): \(path)")
        }
        return try recognize(pix: pix, resolution: resolution, what: path)
    }

    /// Recognizes the text in an encoded image held in memory (PNG, JPEG, TIFF, BMP, GIF, WebP, as
    /// leptonica was built to read).
    /// - Throws: ``SluiceError`` with code `unreadable` when leptonica cannot decode the bytes.
    package func recognize(imageData: [UInt8], resolution: Int = 300) throws -> (text: String, confidence: Int) {
        let decoded = imageData.withUnsafeBufferPointer { buffer -> OpaquePointer? in
            guard let base = buffer.baseAddress else { return nil }
            return sluice_pix_read_mem(base, buffer.count)
        }
        guard let pix = decoded else {
            throw SluiceError(.unreadable, "cannot decode image (damaged, or a format this leptonica cannot read)")
        }
        return try recognize(pix: pix, resolution: resolution, what: "image")
    }

    /// Recognizes 8-bit gray pixels (0 black … 255 white), row by row without padding, such as a
    /// rendered PDF page.
    package func recognize(
        gray pixels: [UInt8],
        width: Int,
        height: Int,
        resolution: Int
    ) throws -> (text: String, confidence: Int) {
        precondition(pixels.count == width * height, "gray buffer size does not match width × height")
        return try lock.withLock {
            defer { sluice_tess_clear(handle) }
            return try pixels.withUnsafeBufferPointer { buffer in
                sluice_tess_set_image(handle, buffer.baseAddress, Int32(width), Int32(height), 1, Int32(width))
                sluice_tess_set_source_resolution(handle, Int32(resolution))
                return try recognizeCurrentImage(what: "rendered page")
            }
        }
    }

    /// Recognizes and destroys `pix`.
    private func recognize(
        pix: OpaquePointer,
        resolution: Int,
        what path: String
    ) throws -> (text: String, confidence: Int) {
        defer {
            var owned: OpaquePointer? = pix
            sluice_pix_destroy(&owned)
        }

        return try lock.withLock {
            // Tesseract does not copy the image: clear it before `pix` is destroyed.
            defer { sluice_tess_clear(handle) }
            sluice_tess_set_image2(handle, pix)
            // Set after the image (SetImage resets it); the file's own value wins when it has one.
            let fileResolution = Int(sluice_pix_get_x_res(pix))
            sluice_tess_set_source_resolution(handle, Int32(fileResolution > 0 ? fileResolution : resolution))
            return try recognizeCurrentImage(what: path)
        }
    }

    /// Runs recognition on the image set on the handle; the caller holds the lock.
    private func recognizeCurrentImage(what path: String) throws -> (text: String, confidence: Int) {
        guard sluice_tess_recognize(handle) == 0 else {
            throw SluiceError(.extractionFailed, "tesseract could not recognize \(path)")
        }
        guard let utf8 = sluice_tess_get_utf8_text(handle) else {
            throw SluiceError(.extractionFailed, "tesseract returned no text for \(path)")
        }
        defer { sluice_tess_delete_text(utf8) }
        let text = String(cString: utf8)
        let confidence = Int(sluice_tess_mean_text_conf(handle))
        return (text, max(0, confidence))
    }

    // MARK: - C helpers

    private static func makeEngine(languages: [String], dataPath: String, mode: Int32) throws -> OpaquePointer {
        guard !languages.isEmpty else {
            throw SluiceError(.configuration, "OCR needs at least one language")
        }
        // Tesseract only prints to stderr when a language file is missing; check first for a clear error.
        let missing = languages.filter {
            !FileManager.default.fileExists(atPath: (dataPath as NSString).appendingPathComponent("\($0).traineddata"))
        }
        guard missing.isEmpty else {
            let files = missing.map { "\($0).traineddata" }.joined(separator: ", ")
            let packages = missing.map { "tesseract-ocr-\($0)" }.joined(separator: " ")
            throw SluiceError(
                .configuration,
                "tesseract language data not found: \(files) in \(dataPath) "
                    + "(install \(packages), or set TESSDATA_PREFIX to the tessdata folder)"
            )
        }
        // Loaded here, at the first engine of the process (see CTesseract.h): PDF-text-only workers never load it.
        try loadLibrary()
        guard let engine = sluice_tess_create() else {
            throw SluiceError(.extractionFailed, "tesseract could not create an engine")
        }
        let language = languages.joined(separator: "+")
        guard sluice_tess_init3(engine, dataPath, language) == 0 else {
            sluice_tess_delete(engine)
            throw SluiceError(.configuration, "tesseract could not load language '\(language)' from \(dataPath)")
        }
        // Tesseract's progress chatter ("Detected 18 diacritics") is not a log line of ours.
        _ = sluice_tess_set_variable(engine, "debug_file", "/dev/null")
        // The C API's default page segmentation differs from the command line's; set it explicitly.
        sluice_tess_set_page_seg_mode(engine, mode)
        return engine
    }

    /// Loads libtesseract into this process if it is not yet (once; see CTesseract.h).
    /// - Throws: ``SluiceError`` with code `configuration` when it cannot be loaded.
    package static func loadLibrary() throws {
        guard sluice_tess_load() == 0 else {
            let reason = sluice_tess_load_error().map { String(cString: $0) } ?? "unknown error"
            throw SluiceError(
                .configuration,
                "cannot load Tesseract for OCR: \(reason) (install libtesseract5, or libtesseract-dev)"
            )
        }
    }

    /// Tesseract's version ("5.3.0"), loading the library; "unavailable" when it cannot be loaded (OCR then
    /// fails with the reason).
    package static var tesseractVersion: String {
        sluice_tess_version().map { String(cString: $0) } ?? "unavailable"
    }
}
