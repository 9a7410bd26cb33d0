import SluiceCore

/// Splits a document's text into chunks sized by the embedder's token counter.
package struct ChunkStep: Sendable {
    package let chunker: any Chunker

    package func callAsFunction(_ document: DocumentWork) async -> DocumentWork {
        var document = document
        guard let text = document.text else { return document }
        let chunks = WorkCPU.measure { chunker.chunk(text) }
        document.documentMetadata = text.metadata
        document.text = nil
        guard !chunks.isEmpty else {
            document.fail(SluiceError(.emptyDocument, "no text to index after extraction"), as: .emptyDocument)
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
