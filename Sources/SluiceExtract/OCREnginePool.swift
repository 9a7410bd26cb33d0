import Foundation
import SluiceCore
import Synchronization

/// Tesseract engines for concurrent OCR: a caller borrows one for the duration of a recognition, so each
/// thread works with its own `TessBaseAPI` (the pool grows to the number of threads using it at once and
/// keeps them for reuse; each costs 25–125 MB).
package final class OCREnginePool: Sendable {
    package let options: PipelineConfiguration.Extract.OCR
    private let idle = Mutex<[OCREngine]>([])

    package init(options: PipelineConfiguration.Extract.OCR) {
        self.options = options
    }

    /// Runs `body` with an engine no other thread is using.
    /// - Throws: ``SluiceError`` with code `configuration` when an engine cannot be created (missing
    ///   language data), or whatever `body` throws.
    package func withEngine<T>(_ body: (OCREngine) throws -> T) throws -> T {
        let engine =
            try idle.withLock { $0.popLast() }
            ?? OCREngine(languages: options.languages, pageSegmentationMode: options.pageSegmentationMode)
        defer { idle.withLock { $0.append(engine) } }
        return try body(engine)
    }
}
