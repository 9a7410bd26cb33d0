import ArgumentParser
import Foundation
import Sluice

/// `--as PRINCIPAL` and `--groups a,b` of `search` and `ask`: the answer a restricted identity would get
/// from `sluice serve` (docs/ACCESS.md), to test the pipeline's access rules. Without them the CLI reads
/// every record, as the operator does.
struct AccessOptions: ParsableArguments {
    @Option(
        name: .customLong("as"),
        help: ArgumentHelp(
            "Read only what this principal may read (the pipeline's access section).",
            valueName: "principal"
        )
    )
    var principal: String?

    @Option(help: ArgumentHelp("The principal's groups, comma-separated (with or without --as).", valueName: "groups"))
    var groups: String?

    /// `filter` restricted to what the identity may read; `filter` itself without `--as`/`--groups`.
    /// - Parameter sink: the store searched: one that cannot express the access filter is refused.
    /// - Throws: ``SluiceError/Code/usage`` when the pipeline has no `access` section;
    ///   ``SluiceError/Code/configuration`` when the store cannot express the access filter.
    func restricting(
        _ filter: SearchFilter?,
        _ configuration: PipelineConfiguration,
        sink: any VectorSink
    ) throws -> SearchFilter? {
        guard principal != nil || groups != nil else { return filter }
        guard configuration.access.isEnabled else {
            throw SluiceError(
                .usage,
                "--as and --groups need access control on (access.enabled, docs/ACCESS.md): without it every record is readable"
            )
        }
        try configuration.access.requireExpressible(
            in: sink.filterLimits,
            store: String(sink.name.prefix { $0 != ":" })
        )
        let names = (groups ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        let identity = AccessIdentity(principal: principal, groups: names.filter { !$0.isEmpty })
        return try identity.restricting(filter, configuration.access)
    }
}
