import Foundation
import SluiceCore
import SluiceEmbed
import SluiceHTTP

extension Pipeline {
    /// `sluice check`'s line about the vision model of `extract.images.caption`, nil when captions are off:
    /// a 16×16 PNG really captioned, through the captioner's own retries. Settings that do not hold (an
    /// unset key variable, a base URL that is not http(s)) and a refused key fail (exit 1); a server that
    /// cannot be reached is unavailable (exit 6).
    func checkCaptioner() async -> DependencyCheck? {
        let settings = configuration.extract.images.caption
        guard settings.enabled else { return nil }
        let place =
            "\(settings.effectiveModel ?? settings.provider.rawValue) at \(redactedURL(settings.effectiveBaseURL ?? "?"))"
        let captioner: ImageCaptioner
        do {
            guard let made = try makeCaptioner() else { return nil }
            captioner = made
        } catch {
            return DependencyCheck(
                "captioner",
                .failed,
                "\(place): \(Self.failureDescription(error))",
                fix: "check the extract.images.caption section of the pipeline file"
            )
        }
        do {
            try await captioner.checkReachable()
            let caption = try await captioner.caption(Self.checkImage, mediaType: "image/png")
            return DependencyCheck("captioner", .ok, "\(caption.model), \(place): captioned a 16×16 test image")
        } catch let refusal as ImageCaptioner.Refusal {
            return DependencyCheck(
                "captioner",
                .failed,
                "\(place): \(refusal.reason)",
                fix: "check extract.images.caption.max_image_mb"
            )
        } catch {
            return Self.failedCheck(
                "captioner",
                place,
                error,
                refused: "check the key in the variable extract.images.caption.api_key_env names",
                unavailable:
                    "start the vision model's server or correct extract.images.caption.base_url, then run again",
                otherwise: "check extract.images.caption.provider, base_url and model (a model that reads images)"
            )
        }
    }

    /// A 16×16 gradient, 158 bytes of PNG.
    static let checkImage: [UInt8] = Array(
        Data(
            base64Encoded:
                "iVBORw0KGgoAAAANSUhEUgAAABAAAAAQCAIAAACQkWg2AAAAZUlEQVR42pXCuwpFAAAG4P/tTQYZZJBBBhlkkEEGGWRwyUFuuYVOeAjP8H99EPKHCrE8qZCrhQq17qnQ2x8VZpdRYQ8JFe4UUeHPARXh6lER7w4V6WFRUVwGFc1fo2K8FSq2V6J+Ax9PH3TyGJcAAAAASUVORK5CYII="
        ) ?? Data()
    )
}
