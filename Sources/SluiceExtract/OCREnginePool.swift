import Foundation
import SluiceCore
import Synchronization

/// Tesseract engines for concurrent OCR: a caller borrows one for the duration of a recognition, so each
/// thread works with its own `TessBaseAPI` (the pool grows to the number of threads using it at once and
/// keeps them for reuse; each costs 25–125 MB).
package final class OCREnginePool: Sendable {
    package let options: PipelineConfiguration.Extract.OCR
    private let idle = Mutex<[OCREngine]>([])
    private let lent = Atomic<Int>(0)

    package init(options: PipelineConfiguration.Extract.OCR) {
        self.options = options
    }

    /// How many times an engine was lent (``withEngine(_:)``): the pages and images OCR'd through this pool.
    package var recognitions: Int { lent.load(ordering: .relaxed) }

    /// Runs `body` with an engine no other thread is using.
    /// - Throws: ``SluiceError`` with code `configuration` when an engine cannot be created (missing
    ///   language data), or whatever `body` throws.
    package func withEngine<T>(_ body: (OCREngine) throws -> T) throws -> T {
        lent.add(1, ordering: .relaxed)
        let engine =
            try idle.withLock { $0.popLast() }
            ?? OCREngine(languages: options.languages, pageSegmentationMode: options.pageSegmentationMode)
        defer { idle.withLock { $0.append(engine) } }
        return try body(engine)
    }
}
