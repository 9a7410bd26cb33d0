import Foundation
import SluiceCore

extension Pipeline {
    /// `sluice check`'s lines on access control (docs/ACCESS.md): the `access` rules as the records will
    /// carry them, and `serve.keys_file` read and checked as `sluice serve` reads it (never printing a key
    /// or a digest). Nothing when the pipeline uses neither.
    func checkAccess() -> [DependencyCheck] {
        var checks: [DependencyCheck] = []
        let access = configuration.access
        if access.isEnabled {
            let rule = access.allowsByDefault ? "allow (everyone reads it)" : "deny (only the operator reads it)"
            checks.append(
                DependencyCheck(
                    "access",
                    .ok,
                    "access control on: each record's readers in the list field \(access.field); a document without any: \(rule)"
                )
            )
        }
        guard let file = configuration.serve.keysFile else { return checks }
        do {
            let keys = try APIKeys.load(configuration.resolve(file))
            let groups = Set(keys.keys.flatMap(\.groups)).count
            var detail = "serve.keys_file: \(keys.keys.count) keys, \(groups) groups"
            if !access.isEnabled {
                detail += "; access control is off (access.enabled), so every key reads every record"
            }
            checks.append(DependencyCheck("access", .ok, detail))
        } catch let error as SluiceError {
            checks.append(
                DependencyCheck(
                    "access",
                    .failed,
                    error.message,
                    fix: "correct the keys file (docs/ACCESS.md shows its form); sluice serve will not start with it"
                )
            )
        } catch {
            checks.append(DependencyCheck("access", .failed, "serve.keys_file: \(error)"))
        }
        return checks
    }
}
