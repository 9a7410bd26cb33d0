import SluiceCore
import SluiceEmbed
import SluiceExtract

/// The extract step's captions of image files (`extract.images.caption`): a vision model's description
/// of the image, indexed beside its OCR text.
///
/// Each section of the result says where its text came from (`text_source`: `ocr` or `caption`, carried by
/// every chunk into its record); the document's metadata names the model (`caption_model`) and the
/// sources (`text_sources`: `ocr,caption`, `caption`, `ocr`). Captions are kept in the extraction cache by
/// the image's content hash and ``identity(_:)`` (model, prompt, the request's settings), so that an image
/// extracted again — a copy under a new name, a re-run after a change of chunking — is not sent again.
///
/// An image the model may not be sent (over `max_image_mb`, or refused for its size) keeps its OCR text
/// alone, the reason in `caption_skipped`; with no OCR text either it fails as an empty image does today,
/// both reasons said. A refusal to go on (401, 403, quota) stops the run (exit 5), the document left for
/// the next run; other failures (retries spent, a model that will not take the request) fail the
/// document with ``SluiceError/Code/extractionFailed``, which the next run tries again.
package struct ImageCaptioning: Sendable {
    package let captioner: ImageCaptioner
    /// Called with a refusal to go on, once per document it stops.
    package let onRefusal: @Sendable (SluiceError) -> Void
    /// The ZIP container's limits (`extract.zip`), which hold when a DOCX's or PPTX's pictures are read.
    package var zip = PipelineConfiguration.Extract.ZIP()

    package init(captioner: ImageCaptioner, onRefusal: @escaping @Sendable (SluiceError) -> Void = { _ in }) {
        self.captioner = captioner
        self.onRefusal = onRefusal
    }

    /// The version of the captions' cache entries: bump it when what is stored for a caption changes.
    static let cacheVersion = 1

    /// The extraction cache's key for captions made with these settings, beside the image's content hash:
    /// the provider, model, prompt, detail and `max_tokens` (not the address: a server moved keeps its
    /// captions), and the revision, which is the request to caption again: each revision has captions of
    /// its own.
    ///
    /// Revision 1 (the default) adds nothing to the key, so that it is the key captions had before the
    /// revision was part of it and the captions cached then stay valid.
    package static func identity(_ settings: PipelineConfiguration.Extract.Images.Caption) -> ExtractorIdentity {
        var key = [
            "provider": settings.provider.rawValue, "model": settings.effectiveModel ?? "",
            "prompt": settings.prompt, "detail": settings.detail, "max_tokens": String(settings.maxTokens),
        ]
        if settings.revision != 1 { key["revision"] = String(settings.revision) }
        return ExtractorIdentity(name: "caption", version: cacheVersion, settings: key)
    }

    var identity: ExtractorIdentity { Self.identity(captioner.settings) }

    /// Whether the document, read by the extractor named `extractor`, is an image file to caption.
    func applies(to extractor: String, bytes: [UInt8]) -> Bool {
        extractor == "image" && FormatSniffer.sniff(bytes).isImage
    }

    /// The image's text: its OCR result (`ocr`) with the caption beside it.
    ///
    /// - Parameters:
    ///   - ocr: What OCR made of the image: its text, or its failure (an image without text is captioned
    ///     all the same; another failure is returned as it is, without a request).
    ///   - cached: Looks a caption up in the extraction cache; `store` keeps a new one there.
    func captioned(
        _ ocr: Result<ExtractedText, any Error>,
        bytes: [UInt8],
        cached: () async -> ExtractedText?,
        store: (ExtractedText) async -> Void,
        tally: RunTally
    ) async -> Result<ExtractedText, any Error> {
        var emptiness: SluiceError?
        switch ocr {
        case .success: break
        case .failure(let error as SluiceError) where error.code == .emptyDocument: emptiness = error
        case .failure: return ocr
        }
        let format = FormatSniffer.sniff(bytes)
        var caption: ExtractedText
        if let hit = await cached() {
            caption = hit
            tally.update { $0.captionsCached = ($0.captionsCached ?? 0) + 1 }
        } else {
            do {
                let made = try await captioner.caption(bytes, mediaType: format.mediaType)
                caption = ExtractedText(
                    sections: [TextSection(text: made.text, page: 1, metadata: ["text_source": "caption"])],
                    metadata: ["caption_model": made.model]
                )
                tally.update { $0.captionsMade = ($0.captionsMade ?? 0) + 1 }
                await store(caption)
            } catch let refusal as ImageCaptioner.Refusal {
                guard case .success(var text) = ocr else {
                    return .failure(
                        SluiceError(
                            .emptyDocument,
                            "\(emptiness?.message ?? "no text"), and no caption: \(refusal.reason)"
                        )
                    )
                }
                text.metadata["caption_skipped"] = refusal.reason
                text.metadata["text_sources"] = "ocr"
                return .success(Self.marked(text))
            } catch let error as SluiceError where error.code == .providerRefused {
                onRefusal(error)
                return .failure(error)
            } catch {
                return .failure(error)
            }
        }
        guard case .success(let text) = ocr else {
            var alone = caption
            alone.metadata["format"] = format.rawValue
            alone.metadata["text_sources"] = "caption"
            return .success(alone)
        }
        var both = Self.marked(text)
        both.sections += caption.sections
        both.metadata.merge(caption.metadata) { _, new in new }
        both.metadata["text_sources"] = "ocr,caption"
        return .success(both)
    }

    /// OCR text with each section marked as such.
    private static func marked(_ text: ExtractedText) -> ExtractedText {
        var text = text
        for index in text.sections.indices { text.sections[index].metadata["text_source"] = "ocr" }
        return text
    }
}

extension DocumentFormat {
    /// The MIME type an image is sent as (the formats ``isImage`` covers).
    var mediaType: String {
        switch self {
        case .jpeg: "image/jpeg"
        case .png, .tiff, .bmp, .gif, .webp: "image/\(rawValue)"
        default: "application/octet-stream"
        }
    }
}
