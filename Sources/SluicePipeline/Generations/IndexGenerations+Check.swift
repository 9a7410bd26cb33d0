import Foundation
import SluiceCore
import SluiceSinks
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

extension IndexGenerations {
    /// `sluice check`'s `coordination` line when the pipeline file names a coordination store
    /// (`generations.coordination`): the store reached, and the version of the deployment's manifest in it.
    /// Unavailable (exit 6) when it cannot be reached, failed (exit 1) when it is named wrongly; nil when
    /// none is named.
    package static func checkCoordination(_ base: PipelineConfiguration) async -> DependencyCheck? {
        guard base.generations.hasCoordination, let remote = RemoteGenerationStore(configuration: base) else {
            return nil
        }
        do {
            guard
                let store = try CoordinationStore.open(
                    remote.base,
                    deployment: StoreGenerationDeployment.deploymentName(remote)
                )
            else { return nil }
            let version = try await store.checkReachable()
            return DependencyCheck(
                "coordination",
                .ok,
                "\(store.location): reachable; "
                    + (version.map { "the deployment's manifest is at version \($0)" }
                        ?? "no manifest yet (a sharded `sluice generation start` writes it)")
            )
        } catch {
            let code = RunExitCode(for: error)
            return DependencyCheck(
                "coordination",
                code == .usage ? .failed : .unavailable,
                (error as? SluiceError)?.message ?? "\(error)",
                fix: code == .usage
                    ? "correct generations.* (docs/CONFIGURATION.md)"
                    : "start the coordination store's server (PostgreSQL, or the S3 endpoint), or check generations.coordination and its credentials"
            )
        }
    }
}
