import Foundation
import SluiceCore
import SluiceExtract
import SluiceState

#if canImport(Glibc)
import Glibc
#endif

/// Reads a document, hashes its bytes (XXH3-128) and, unless they match what is indexed, extracts its
/// text. Reading and extraction run on the extract executor's threads, with a per-document time limit,
/// except the extraction of plain text (``Extractor/extractsInline``), which runs on the stage's own.
///
/// The text comes from, in order: another document of this run with identical bytes (``sharing``), the
/// state's extraction cache (``persistent``, for extractors with a ``Extractor/cacheIdentity``), and
/// only then the extractor. An image file's text then gets its caption beside it (``captioning``, from the
/// same cache or the vision model), and a PDF's, DOCX's or PPTX's the captions of its pictures where they
/// sit (``ImageCaptioning/withPictures(_:listing:cached:store:tally:)``), before it is shared with identical
/// files.
package struct ExtractStep: Sendable {
    /// Where the bytes come from: a folder's file is read where it is, a remote object is fetched first
    /// (``DocumentSource/materialize(_:maxBytes:)``) into a temporary file deleted once extracted.
    package let source: any DocumentSource
    package let registry: ExtractorRegistry
    package let executor: BlockingExecutor
    package let maxBytes: Int
    /// `extract.max_text_mb` in bytes: a document may produce that much text, or four times its file's size
    /// where that is larger (``TextBudget/init(setting:fileSize:)``).
    package var maxTextBytes = Int.max
    package let timeout: Duration
    package let tally: RunTally
    /// Documents with identical bytes share one extraction.
    package let sharing: ExtractionSharing
    /// Earlier runs' extractions of identical bytes (nil: the cache is off).
    package let persistent: PersistentExtractions?
    /// Captions of image files beside their OCR text (nil: `extract.images.caption` is off).
    package var captioning: ImageCaptioning? = nil

    package func callAsFunction(_ document: DocumentWork) async -> DocumentWork {
        var document = document
        if document.file.size > maxBytes {
            document.fail(
                SluiceError(
                    .tooLarge,
                    "file is \(Self.megabytes(document.file.size)) MB, over extract.max_file_mb (\(Self.megabytes(maxBytes)) MB)"
                ),
                as: .tooLarge
            )
            return document
        }
        let local: MaterializedFile
        do {
            local = try await source.materialize(document.file, maxBytes: maxBytes)
        } catch {
            document.fail(error, as: .unreadable)
            return document
        }
        defer { local.discard() }
        document.fileMetadata.merge(local.metadata) { _, read in read }
        return await extract(document, from: local.file, charset: local.charset)
    }

    /// Reads the bytes from `file` (the document's own, or its fetched copy), and extracts them.
    private func extract(_ document: DocumentWork, from file: SourceFile, charset: String?) async -> DocumentWork {
        var document = document
        let url = file.url
        let key = document.file.key
        let bytes: [UInt8]
        do {
            bytes = try await executor.run { [file] in
                DebugPause.at("READ", path: url.path)
                return try file.open().readAll()
            }
        } catch {
            document.fail(error, as: .unreadable)
            return document
        }
        tally.update { $0.bytesRead += bytes.count }
        let hash = WorkCPU.measure { ContentHash(of: bytes) }
        document.contentHash = hash
        document.file.size = bytes.count
        let textLimit = TextBudget(setting: maxTextBytes, fileSize: bytes.count).limit
        // Unchanged bytes are skipped, unless a crashed attempt left pending ids: it may have overwritten
        // records whose ids this version shares (same key, ordinal and text) with another version's
        // metadata, so the document is written again (its vectors come from the embedding cache).
        // A change of metadata alone (the pipeline's values, front matter rules, readers) writes the records
        // again; the file's mtime and size alone do not (they change with the bytes as far as the index is
        // concerned: DocumentMetadataRules.ofTheBytes, docs/CONFIGURATION.md's `mtime`).
        if let previous = document.previous, previous.status == .indexed, previous.contentHash == hash,
            previous.pendingIDs.isEmpty, previous.metadataHash == document.metadataHash
        {
            document.outcome = .unchanged
            return document
        }
        // Touched, not changed: the bytes of a known failure under the same settings (docs/DESIGN.md §11).
        if document.skipsKnownFailures, let previous = document.previous, previous.status == .failed,
            previous.failedHash == hash, previous.knownFailure != nil,
            previous.knownFailure == document.knownFailureKey,
            previous.pendingIDs.isEmpty
        {
            document.outcome = .knownFailure
            return document
        }
        let input = ExtractionInput(
            key: key,
            fileURL: url,
            bytes: bytes,
            fileIdentity: file.identity,
            followsSymlink: file.followsSymlink,
            maxTextBytes: textLimit,
            declaredCharset: charset
        )
        // Sniffing (every extractor's `accepts`) is the stage's work too.
        guard let extractor = WorkCPU.measure({ registry.extractor(for: input) }) else {
            document.fail(SluiceError(.unsupportedFormat, "no extractor accepts this file"), as: .unsupportedFormat)
            return document
        }
        document.read(by: extractor.name)
        let shareKey = ExtractionSharing.Key(content: hash, extractor: extractor.name, charset: charset)
        let claim = await sharing.claim(shareKey)
        if case .shared(let text) = claim {
            document.text = text
            tally.update { $0.extractionsShared = ($0.extractionsShared ?? 0) + 1 }
            checkTextSize(&document)
            return document
        }
        let identity = persistent == nil ? nil : extractor.cacheIdentity
        var result: Result<ExtractedText, any Error>
        var fromCache = false
        if let persistent, let identity, var text = await persistent.lookup(hash, identity: identity, on: executor) {
            text.removeNUL()  // an entry written before NUL was removed at extraction
            result = .success(text)
            fromCache = true
            tally.update { $0.extractionsCached = ($0.extractionsCached ?? 0) + 1 }
        } else {
            result = await run(extractor, on: input, textLimit: textLimit)
        }
        let extracted = fromCache ? nil : try? result.get()
        if let captioning, captioning.applies(to: extractor.name, bytes: bytes) {
            let captionIdentity = captioning.identity
            result = await captioning.captioned(
                result,
                bytes: bytes,
                cached: { [persistent, executor] in
                    await persistent?.lookup(hash, identity: captionIdentity, on: executor)
                },
                store: { [persistent] caption in
                    await persistent?.store(caption, content: hash, identity: captionIdentity)
                },
                tally: tally
            )
        }
        // The pictures inside a PDF, DOCX or PPTX: listed on the executor's threads (inflation; a PDF's
        // decoded by poppler in a worker process where its text is read), their captions placed where they sit.
        if let captioning, captioning.appliesToPictures(of: extractor.name), case .success(let text) = result {
            let selection = captioning.pictureSelection
            let zip = captioning.zip
            let listing: Result<PictureSelection.Listing, any Error>
            do {
                listing = .success(
                    try await executor.run {
                        try EmbeddedPictures.list(input, extractor: extractor, zip: zip, selection: selection)
                    }
                )
            } catch {
                listing = .failure(error)
            }
            let captionIdentity = captioning.identity
            result = await captioning.withPictures(
                text,
                listing: listing,
                cached: { [persistent, executor] hash in
                    await persistent?.lookup(hash, identity: captionIdentity, on: executor)
                },
                store: { [persistent] caption, hash in
                    await persistent?.store(caption, content: hash, identity: captionIdentity)
                },
                tally: tally
            )
        }
        switch result {
        case .success(let text): document.text = text
        case .failure(let error): document.fail(error, as: .extractionFailed)
        }
        if case .extract = claim { await sharing.finish(shareKey, with: try? result.get()) }
        if fromCache { checkTextSize(&document) }  // kept under another run's extract.max_text_mb
        // Kept only if the file still is what was hashed: worker processes read it again by path.
        if let persistent, let identity, let extracted,
            (try? await executor.run({ [file] in Self.unchangedSinceScan(file) })) == true
        {
            await persistent.store(extracted, content: hash, identity: identity)
        }
        return document
    }

    /// Runs the extractor on the document's bytes: on this thread for plain text, else on the executor
    /// under the time limit; the text held to its budget.
    private func run(
        _ extractor: any Extractor,
        on input: ExtractionInput,
        textLimit: Int
    ) async -> Result<
        ExtractedText, any Error
    > {
        do {
            var text: ExtractedText
            if extractor.extractsInline {
                // Plain text: on this thread (see `Extractor.extractsInline`); it cannot hang, so no deadline.
                text = try WorkCPU.measure { try extractor.extract(input) }
            } else {
                text = try await withDeadline(
                    timeout,
                    what: "extraction (\(extractor.name))",
                    setting: "extract.timeout_seconds"
                ) { [executor] in
                    try await executor.run { try extractor.extract(input) }
                }
            }
            // Every extractor charges its text as it goes; this holds one that does not to the same limit.
            try WorkCPU.measure {
                try TextBudget(limit: textLimit).check(text)
                text.removeNUL()
            }
            tally.update { $0.addOCRCounts(of: text.metadata) }
            return .success(text)
        } catch {
            return .failure(error)
        }
    }

    /// Fails the document if its text, from the sharing or the extraction cache, is over its bound.
    private func checkTextSize(_ document: inout DocumentWork) {
        guard let text = document.text else { return }
        do {
            try TextBudget(setting: maxTextBytes, fileSize: document.file.size).check(text)
        } catch {
            document.fail(error, as: .textTooLarge)
        }
    }

    /// Whether the file still has the size (of the bytes read) and modification time it was scanned with.
    static func unchangedSinceScan(_ file: SourceFile) -> Bool {
        var info = stat()
        guard (file.followsSymlink ? stat(file.url.path, &info) : lstat(file.url.path, &info)) == 0 else {
            return false
        }
        if let identity = file.identity,
            identity != FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
        {
            return false
        }
        let mtime = Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
        return Int(info.st_size) == file.size && mtime == file.mtimeNanoseconds
    }

    static func megabytes(_ bytes: Int) -> String { String(format: "%.1f", Double(bytes) / 1_048_576) }
}
