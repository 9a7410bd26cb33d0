import SluiceCore

/// Shares one extraction among the documents of a run whose bytes are identical (docs/DESIGN.md §2: the same
/// bytes under two keys are extracted once; their chunks are then embedded once through the cache).
///
/// Keyed by the content hash and the extractor chosen, since a file's name can pick the extractor. A
/// second document with the same key waits for an extraction in progress, or takes a finished one while
/// it is still held: finished texts are kept oldest-out within a byte budget, so memory stays bounded
/// however large the corpus (copies far apart in a very large run are extracted again).
package actor ExtractionSharing {
    package struct Key: Hashable, Sendable {
        let content: ContentHash
        let extractor: String
        /// The character set the bytes came declared in: the same bytes in two declared character sets are
        /// two texts.
        let charset: String?

        package init(content: ContentHash, extractor: String, charset: String? = nil) {
            self.content = content
            self.extractor = extractor
            self.charset = charset
        }
    }

    /// What a document does with its bytes.
    package enum Claim: Sendable {
        /// Another document's extraction of the same bytes.
        case shared(ExtractedText)
        /// Extract them, then ``finish(_:with:)`` (waiting documents depend on it).
        case extract
        /// Extract them, alone: the shared attempt failed (its own error may not be this document's).
        case extractAlone
    }

    private enum Entry {
        case extracting([CheckedContinuation<ExtractedText?, Never>])
        case done(ExtractedText, bytes: Int)
    }

    private var entries: [Key: Entry] = [:]
    /// Finished keys, oldest first.
    private var finished: [Key] = []
    private var heldBytes = 0
    private let budgetBytes: Int

    package init(budgetBytes: Int) { self.budgetBytes = budgetBytes }

    /// The run's budget for finished texts: 4 MB. Extractions that cost much (PDF, OCR) are in the state's
    /// extraction cache on disk as well (`extract.cache_mb`), so holding finished texts in memory saves only
    /// the cheap ones' work; with 16 MB the held texts grew with the corpus up to it (10 MB on the 1×
    /// benchmark corpus, 16 MB on the 10×, where it shared 104 of 2,160 documents: docs/BENCHMARKS.md,
    /// "Flat memory with the default index"). Documents extracting the same bytes at the same time always
    /// share, whatever the budget.
    package static let runBudgetBytes = 4 << 20

    /// Documents waiting for the extraction of `key` (for tests).
    package func waiting(for key: Key) -> Int {
        if case .extracting(let waiters) = entries[key] { return waiters.count }
        return 0
    }

    package func claim(_ key: Key) async -> Claim {
        switch entries[key] {
        case .done(let text, _):
            return .shared(text)
        case .extracting(let waiters):
            let text = await withCheckedContinuation { continuation in
                entries[key] = .extracting(waiters + [continuation])
            }
            return text.map(Claim.shared) ?? .extractAlone
        case nil:
            entries[key] = .extracting([])
            return .extract
        }
    }

    /// Ends the extraction a ``claim(_:)`` returned `.extract` for; `text` is nil when it failed.
    package func finish(_ key: Key, with text: ExtractedText?) {
        guard case .extracting(let waiters) = entries[key] else { return }
        let bytes = text?.utf8Count ?? 0
        if let text, bytes <= budgetBytes {
            entries[key] = .done(text, bytes: bytes)
            finished.append(key)
            heldBytes += bytes
            evict()
        } else {
            entries[key] = nil
        }
        for waiter in waiters { waiter.resume(returning: text) }
    }

    private func evict() {
        var dropped = 0
        while heldBytes > budgetBytes, dropped < finished.count {
            let oldest = finished[dropped]
            dropped += 1
            if case .done(_, let bytes) = entries[oldest] {
                heldBytes -= bytes
                entries[oldest] = nil
            }
        }
        finished.removeFirst(dropped)
    }
}
