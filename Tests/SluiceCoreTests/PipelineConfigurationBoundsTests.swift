import Foundation
import SluiceCore
import Testing

/// Settings that once stopped or exhausted the process are refused with a configuration error (exit 1),
/// found by session 46's campaign: infinite or huge sizes (a fatal conversion to an integer), unbounded
/// parallelism and batch sizes (gigabytes of workers, an allocation of 2^63 records), a `--set` value that is
/// not YAML (taken as a one-pattern list that matched nothing), and empty paths (the pipeline file's folder).
@Suite struct PipelineConfigurationBoundsTests {
    static func load(_ overrides: [String]) throws -> PipelineConfiguration {
        try PipelineConfiguration.load(file: nil, overrides: overrides)
    }

    @Test(arguments: [
        "extract.max_file_mb=.inf", "extract.max_file_mb=1e300", "extract.max_text_mb=.inf", "extract.cache_mb=.inf",
        "extract.zip.max_inflated_mb=.inf", "extract.docx.max_inflated_mb=1e300", "extract.parallelism=20000",
        "chunk.parallelism=9223372036854775807", "run.upsert_parallelism=9223372036854775807", "run.buffer=1000000000",
        "embed.batch=9223372036854775807", "embed.parallelism=100000", "embed.max_batch_tokens=9223372036854775807",
        "sink.batch=9223372036854775807", "source.exclude=[\"**/secret/**\"", "source.include=*.md", "sink.path=",
        "state=", "source.path=\"  \"",
    ])
    func refused(setting: String) throws {
        let error = try #require(throws: SluiceError.self) { try Self.load([setting]) }
        #expect(error.code == .configuration, "\(setting): \(error)")
    }

    @Test func theLargestValuesAllowedAreRead() throws {
        let configuration = try Self.load([
            "extract.max_file_mb=1048576", "run.upsert_parallelism=256", "sink.batch=100000", "embed.batch=65536",
            "source.exclude=[\"**/secret/**\"]", "source.include=\"*.md\"",
        ])
        #expect(configuration.extract.maxFileMB == 1_048_576)
        #expect(configuration.run.upsertParallelism == 256)
        #expect(configuration.sink.batch == 100_000)
        #expect(configuration.source.exclude == ["**/secret/**"])
        #expect(configuration.source.include == ["*.md"])
    }
}
