import SluiceCore

extension IsolatedExtractor {
    /// The pictures of the PDF `input` that `selection` takes, decoded by poppler in a worker process
    /// (a `pdf-pictures` request) and sent back as PNG: a picture that crashes or hangs poppler fails this
    /// call (`extractor-crashed`, `timeout` at `extract.timeout_seconds`) and the worker is replaced, as
    /// for the document's text. Blocking: call it on the extract executor's threads.
    ///
    /// The worker's answer is checked as any untrusted picture is: each is taken only if it is a PNG of at
    /// least the minimum size, and no more than `selection`'s count.
    ///
    /// - Throws: ``SluiceError`` as the worker reported it, `extractor-crashed` or `timeout`.
    package func pictures(of input: ExtractionInput, selection: PictureSelection) throws -> PictureSelection.Listing {
        precondition(kind == .pdf, "only a PDF's pictures are decoded in the workers")
        var ask = request(.pdfPictures, input, count: selection.maxCount)
        ask.minSidePixels = selection.minSidePixels
        let response = try pool.run([ask], deadline: ContinuousClock.now + timeout)[0]
        guard let list = response.pictures else {
            throw SluiceError(.extractionFailed, "the worker returned no pictures")
        }
        var listing = PictureSelection.Listing()
        for picture in list.pictures {
            listing.consider(Array(picture.png), name: picture.name, place: .page(picture.page), selection: selection)
        }
        listing.small += list.small
        listing.overLimit += list.overLimit
        return listing
    }
}
