import SluiceCore
import SluicePipeline
import Testing

/// The extraction cache's key for captions (``ImageCaptioning/identity(_:)``): `extract.images.caption.revision`
/// is the request to caption again, so each revision has captions of its own; revision 1 keeps the key that
/// captions had before the revision was part of it, so caches made then stay valid.
struct ImageCaptioningIdentityTests {
    static func settings(revision: Int) -> PipelineConfiguration.Extract.Images.Caption {
        var settings = PipelineConfiguration.Extract.Images.Caption()
        settings.enabled = true
        settings.revision = revision
        return settings
    }

    @Test("each revision is an identity of its own")
    func revisionsDiffer() {
        let identities = (1...3).map { ImageCaptioning.identity(Self.settings(revision: $0)) }
        #expect(Set(identities).count == 3, "\(identities)")
    }

    @Test("revision 1 is the identity captions had before revisions were part of it")
    func firstRevisionKeepsTheEarlierKey() {
        let settings = Self.settings(revision: 1)
        let earlier = ExtractorIdentity(
            name: "caption",
            version: 1,
            settings: [
                "provider": settings.provider.rawValue, "model": settings.effectiveModel ?? "",
                "prompt": settings.prompt, "detail": settings.detail, "max_tokens": String(settings.maxTokens),
            ]
        )
        #expect(ImageCaptioning.identity(settings) == earlier)
    }
}
