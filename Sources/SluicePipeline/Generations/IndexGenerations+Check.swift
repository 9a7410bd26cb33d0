import Foundation
import SluiceCore
import SluiceState

extension IndexGenerations {
    /// `sluice check`'s `generations` line: which generation is active, a candidate pending beside it (what
    /// it changes, how to finish it), a previous one kept for a rollback. Nil when generations were never
    /// used. A manifest that cannot be read fails: every reader follows it, so it is not "no generations".
    package static func check(_ base: PipelineConfiguration) -> DependencyCheck? {
        let manifest: GenerationManifest?
        do {
            manifest = try IndexGenerations(configuration: base).manifest()
        } catch {
            return DependencyCheck(
                "generations",
                .failed,
                (error as? SluiceError)?.message ?? "\(error)",
                fix: "restore generations.json from a backup (it names the active generation)"
            )
        }
        guard let manifest else { return nil }
        func described(_ generation: GenerationManifest.Generation) -> String {
            generation.overrides.isEmpty
                ? generation.id : "\(generation.id) (\(generation.overrides.joined(separator: ", ")))"
        }
        var detail = "active \(described(manifest.active))"
        var fixes: [String] = []
        if let candidate = manifest.candidate {
            detail +=
                "; candidate \(described(candidate)) pending: every run builds it and keeps it current beside the active one"
            fixes.append(
                "see how far it is with `sluice generation status`; switch to it with `sluice generation promote`, or abandon it with `sluice generation drop`"
            )
        }
        if let previous = manifest.previous {
            detail += "; previous \(described(previous)) kept for a rollback"
            fixes.append("`sluice generation drop --previous` frees its space once the rollback is no longer needed")
        }
        return DependencyCheck(
            "generations",
            .ok,
            detail,
            fix: fixes.isEmpty ? nil : fixes.joined(separator: "; ")
        )
    }
}
