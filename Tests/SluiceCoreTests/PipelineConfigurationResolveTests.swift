import Foundation
import Testing

@testable import SluiceCore

/// One rule for paths: a pipeline file's paths resolve against its folder, the command line's against the
/// working directory, by the same function.
@Suite struct PipelineConfigurationResolveTests {
    @Test func relativePathsResolveAgainstTheBaseAndAreStandardized() {
        let base = URL(fileURLWithPath: "/srv/pipelines")
        #expect(PipelineConfiguration.resolve("data/../corpus", against: base).path == "/srv/pipelines/corpus")
        #expect(PipelineConfiguration.resolve("/abs/./x/../y", against: base).path == "/abs/y")
        let home = NSHomeDirectory()
        #expect(
            PipelineConfiguration.resolve("~/x", against: base).path
                == URL(fileURLWithPath: home + "/x").standardizedFileURL.path
        )
    }

    @Test func withoutABaseTheWorkingDirectoryIsTheBase() {
        let cwd = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
        #expect(
            PipelineConfiguration.resolve("a/b", against: nil) == cwd.appendingPathComponent("a/b").standardizedFileURL
        )
    }

    @Test func theInstanceResolvesAgainstThePipelineFilesFolder() {
        var configuration = PipelineConfiguration()
        configuration.baseDirectory = URL(fileURLWithPath: "/srv/pipelines")
        #expect(
            configuration.resolve("../state")
                == PipelineConfiguration.resolve("../state", against: configuration.baseDirectory)
        )
        #expect(configuration.resolve("../state").path == "/srv/state")
    }
}
