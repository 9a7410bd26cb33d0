import SluiceCore

/// Splits a document's text into chunks sized by the embedder's token counter.
package struct ChunkStep: Sendable {
    package let chunker: any Chunker
    /// `extract.max_text_mb` in bytes: the chunks, with what each repeats, may come to that much, or four times
    /// the file's size where that is larger (``TextBudget/init(setting:fileSize:)``).
    package var maxTextBytes = Int.max

    package func callAsFunction(_ document: DocumentWork) async -> DocumentWork {
        var document = document
        guard let text = document.text else { return document }
        if let refusal = FrontMatterReaders.refusal(of: document, metadata: text.metadata) {
            document.fail(refusal, as: .malformed)
            return document
        }
        let chunks = WorkCPU.measure { chunker.chunk(text) }
        document.documentMetadata = text.metadata
        document.text = nil
        guard !chunks.isEmpty else {
            document.fail(SluiceError(.emptyDocument, "no text to index after extraction"), as: .emptyDocument)
            return document
        }
        // Each chunk repeats its section's heading path and the document's metadata (in memory they are
        // shared, in the stored records they are not).
        do {
            try WorkCPU.measure {
                try TextBudget(setting: maxTextBytes, fileSize: document.file.size).check(
                    chunks,
                    documentMetadata: text.metadata
                )
            }
        } catch {
            document.fail(error, as: .textTooLarge)
            return document
        }
        document.chunked = chunks
        // The document's title (HTML <title>, DOCX dc:title) travels with each chunk into the stored record.
        if let title = text.metadata["title"], !title.isEmpty {
            for index in document.chunked.indices where document.chunked[index].metadata["title"] == nil {
                document.chunked[index].metadata["title"] = title
            }
        }
        return document
    }
}
