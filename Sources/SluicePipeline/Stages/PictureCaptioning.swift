import SluiceCore
import SluiceEmbed
import SluiceExtract

/// Captions of the pictures inside PDFs, DOCX and PPTX (`extract.images.caption.pictures`), placed where
/// each picture sits: after its paragraph in a DOCX, at the end of its page's (PDF) or slide's (PPTX) text,
/// as a paragraph `Picture: <caption>`, so that the chunk around the picture carries its description.
///
/// The sections that received a caption say so (`text_source: text,caption`, `picture_captions`: the
/// pictures' names); the document's metadata names the model (`caption_model`), the sources
/// (`text_sources: text,caption`) and the counts (`pictures_captioned`, and where any: `pictures_skipped`
/// for those under the minimum size or past the limit, `pictures_failed` with the first failure in
/// `picture_caption_failed`).
///
/// The same cache as image files' captions (a picture's content hash and the caption identity: a picture
/// also found as an image file, or in another document, is sent once), the same client, rate budget and
/// retries. A picture whose caption fails (retries spent, a model that refuses the request, a picture
/// refused for its size) costs only its caption: the document keeps its text, the failure counted and
/// named in its metadata (it is tried again when the document is processed again). A refusal to go on
/// (401, 403, quota) stops the run as it does for image files (exit 5), the document left for the next run.
extension ImageCaptioning {
    /// Whether the pictures inside the document, read by the extractor named `extractor`, are captioned.
    func appliesToPictures(of extractor: String) -> Bool {
        captioner.settings.pictures.enabled && ["pdf", "docx", "pptx"].contains(extractor)
    }

    var pictureSelection: PictureSelection {
        let pictures = captioner.settings.pictures
        return PictureSelection(minSidePixels: pictures.minSidePixels, maxCount: pictures.maxPerDocument)
    }

    /// `text` with the captions of `listing`'s pictures placed where they sit.
    ///
    /// - Parameters:
    ///   - listing: The pictures chosen, or why they could not be listed (the text is kept, the failure said).
    ///   - cached: Looks a caption up in the extraction cache by the picture's hash; `store` keeps a new one.
    func withPictures(
        _ text: ExtractedText,
        listing: Result<PictureSelection.Listing, any Error>,
        cached: @escaping @Sendable (ContentHash) async -> ExtractedText?,
        store: @escaping @Sendable (ExtractedText, ContentHash) async -> Void,
        tally: RunTally
    ) async -> Result<ExtractedText, any Error> {
        var text = text
        let found: PictureSelection.Listing
        switch listing {
        case .success(let listed): found = listed
        case .failure(let error):
            text.metadata["pictures_failed"] = "1"
            text.metadata["picture_caption_failed"] =
                "pictures not listed: \(SluiceError.wrap(error, as: .extractionFailed).message)"
            return .success(text)
        }
        let outcomes = await withTaskGroup(of: (Int, Result<ImageCaptioner.Caption, any Error>).self) { group in
            for (index, picture) in found.pictures.enumerated() {
                group.addTask {
                    (index, await caption(picture, cached: cached, store: store, tally: tally))
                }
            }
            var outcomes = [Result<ImageCaptioner.Caption, any Error>?](repeating: nil, count: found.pictures.count)
            for await (index, outcome) in group { outcomes[index] = outcome }
            return outcomes.compactMap { $0 }
        }
        var placer = PicturePlacer(sections: text.sections)
        var failures: [String] = []
        var model: String?
        for (picture, outcome) in Swift.zip(found.pictures, outcomes) {
            switch outcome {
            case .success(let caption):
                placer.place("Picture: " + caption.text, named: picture.name, at: picture.place)
                model = caption.model
            case .failure(let error as SluiceError) where error.code == .providerRefused:
                onRefusal(error)
                return .failure(error)
            case .failure(let refusal as ImageCaptioner.Refusal):
                failures.append("\(picture.name): \(refusal.reason)")
            case .failure(let error):
                failures.append("\(picture.name): \(SluiceError.wrap(error, as: .extractionFailed).message)")
            }
        }
        text.sections = placer.sections
        let captioned = found.pictures.count - failures.count
        text.metadata["pictures_captioned"] = String(captioned)
        if let model {
            text.metadata["caption_model"] = model
            text.metadata["text_sources"] = "text,caption"
        }
        if found.small + found.overLimit > 0 {
            text.metadata["pictures_skipped"] = String(found.small + found.overLimit)
        }
        if let first = failures.first {
            text.metadata["pictures_failed"] = String(failures.count)
            text.metadata["picture_caption_failed"] = first
        }
        return .success(text)
    }

    /// One picture's caption: from the cache, else from the model (kept in the cache).
    private func caption(
        _ picture: EmbeddedPicture,
        cached: @Sendable (ContentHash) async -> ExtractedText?,
        store: @Sendable (ExtractedText, ContentHash) async -> Void,
        tally: RunTally
    ) async -> Result<ImageCaptioner.Caption, any Error> {
        let hash = ContentHash(of: picture.bytes)
        if let hit = await cached(hash), let section = hit.sections.first {
            tally.update { $0.captionsCached = ($0.captionsCached ?? 0) + 1 }
            return .success(ImageCaptioner.Caption(text: section.text, model: hit.metadata["caption_model"] ?? ""))
        }
        do {
            let made = try await captioner.caption(
                picture.bytes,
                mediaType: FormatSniffer.sniff(picture.bytes).mediaType
            )
            tally.update { $0.captionsMade = ($0.captionsMade ?? 0) + 1 }
            // Stored as an image file's caption is: the two share entries.
            await store(
                ExtractedText(
                    sections: [TextSection(text: made.text, page: 1, metadata: ["text_source": "caption"])],
                    metadata: ["caption_model": made.model]
                ),
                hash
            )
            return .success(made)
        } catch {
            return .failure(error)
        }
    }
}
