import SluiceCore

extension Pipeline {
    /// The refusal of a run whose settings would re-shape the chunks of a generation in place: with
    /// generations in use, a change of the settings that change vectors builds a candidate instead
    /// (docs/GENERATIONS.md), so that what is served is never a mix of two chunkings.
    static func shapingChangeRefused(generation: String, changes: [String]) -> SluiceError {
        SluiceError(
            .configuration,
            "the settings that shape chunks differ from generation \(generation)'s (\(changes.joined(separator: "; "))): "
                + "a generation is never re-chunked in place. Undo the change in the pipeline file, and build it "
                + "as a candidate: `sluice generation start PIPELINE --set key=value`, `sluice run PIPELINE`, "
                + "`sluice generation promote PIPELINE` (docs/GENERATIONS.md)"
        )
    }
}
