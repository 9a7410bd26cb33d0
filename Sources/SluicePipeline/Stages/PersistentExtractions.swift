import SluiceCore
import SluiceState

/// The extract step's access to the state's extraction cache (`CheckpointStore+Extractions.swift`).
///
/// Lookups run on the extract executor (they copy a possibly large value out of the map, and may fault
/// its pages in from disk); stores run on the state executor, like every LMDB write transaction. An
/// extraction is stored right after it succeeds, in its own small transaction, rather than with the
/// document's commit: the entry is keyed by content, so it is valid whatever happens to the document
/// next; a crash before the commit leaves an entry that the resumed run uses instead of parsing or OCR'ing
/// the file again (and that garbage collection removes if nothing comes to reference it); and the text is
/// not carried through the pipeline to the commit stage, so memory in flight does not grow. Its cost, one
/// write transaction per PDF or image, is milliseconds against the extraction's seconds.
/// Errors only make a lookup miss or a store not happen: the cache never fails a document.
package struct PersistentExtractions: Sendable {
    let checkpoint: CheckpointStore
    let stateExecutor: BlockingExecutor
    let capBytes: Int

    package init(checkpoint: CheckpointStore, stateExecutor: BlockingExecutor, capBytes: Int) {
        self.checkpoint = checkpoint
        self.stateExecutor = stateExecutor
        self.capBytes = capBytes
    }

    func lookup(
        _ content: ContentHash,
        identity: ExtractorIdentity,
        on executor: BlockingExecutor
    ) async -> ExtractedText? {
        // A cache, not the checkpoint's record of the document: an entry that cannot be read costs one
        // extraction again (which `store` then rewrites); the document's own record is read through
        // ``RecordRead``, which stops the run on damage.
        try? await executor.run { [checkpoint] in try checkpoint.cachedExtraction(content: content, identity: identity)
        } ?? nil
    }

    func store(_ text: ExtractedText, content: ContentHash, identity: ExtractorIdentity) async {
        let capBytes = capBytes
        // A cache write that fails loses only the saving of an extraction next time.
        _ = try? await stateExecutor.run { [checkpoint] in
            try checkpoint.cacheExtraction(text, content: content, identity: identity, capBytes: capBytes)
        }
    }
}
