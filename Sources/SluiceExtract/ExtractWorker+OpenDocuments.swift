extension ExtractWorker {
    /// The PDFs a worker keeps open, least recently used first out.
    ///
    /// The pipeline extracts `extract.parallelism` documents at once and spreads the pages of each over
    /// every worker, so a worker takes ranges of several documents in turn. Re-opening one costs its
    /// cross-reference table, fonts and the text device's colour transforms again (each range of a
    /// manual re-paid them when a worker kept only its last document), so a worker keeps as many as can
    /// be in flight.
    struct OpenDocuments {
        let capacity: Int
        /// Most recently used last.
        private var entries: [(path: String, document: PDFDocument)] = []

        init(capacity: Int) { self.capacity = max(1, capacity) }

        /// The open document at `path`, or the one `open` returns. At capacity, the least recently used
        /// is closed first, so that no more than `capacity` are ever open at once.
        mutating func document(at path: String, open: (String) throws -> PDFDocument) throws -> PDFDocument {
            if let index = entries.firstIndex(where: { $0.path == path }) {
                let entry = entries.remove(at: index)
                entries.append(entry)
                return entry.document
            }
            if entries.count >= capacity { entries.removeFirst() }  // released before the next is opened
            let document = try open(path)
            entries.append((path, document))
            return document
        }

        var paths: [String] { entries.map(\.path) }
    }
}
