import Foundation
import SluiceTesting
import Testing

@testable import SluiceCore

@Suite struct PipelineConfigurationTests {
    /// Calls `body` with a pipeline file holding `yaml`, in a folder of its own that is removed afterwards.
    func withFile<Result>(_ yaml: String, _ body: (URL) throws -> Result) throws -> Result {
        try TemporaryDirectory.with("pipeline") { folder in
            let url = folder.appendingPathComponent("pipeline.yaml")
            try yaml.write(to: url, atomically: true, encoding: .utf8)
            return try body(url)
        }
    }

    /// The configuration in a pipeline file holding `yaml`.
    func load(_ yaml: String, overrides: [String] = []) throws -> PipelineConfiguration {
        try withFile(yaml) { try PipelineConfiguration.load(file: $0, overrides: overrides) }
    }

    @Test func defaultsApplyToAnEmptyFile() throws {
        let configuration = try load("")
        #expect(configuration.chunk.maxTokens == 256)
        #expect(configuration.embed.provider == .minilm)
        #expect(configuration.sink.kind == .local)
    }

    /// A file without `embed:` (or with one that names no provider) indexes with the real local model, the
    /// one the README's first command uses, never silently with the hash test embedder.
    @Test func withoutAProviderTheEmbedderIsMiniLM() throws {
        let sections = ["source: { path: ./corpus }", "embed: { dimensions: 384, batch: 8 }"]
        for yaml in sections {
            let embed = try load(yaml).embed
            #expect(embed.provider == .minilm, "\(yaml)")
            #expect(embed.dimensions == 384)
        }
        #expect(PipelineConfiguration().embed.provider == .minilm)
        #expect(try load("embed: { provider: hash }").embed.provider == .hash)
    }

    @Test func readsKeysAndResolvesPathsAgainstTheFile() throws {
        let yaml = """
            source: { path: ../corpus, exclude: ["bad/**"] }
            chunk: { max_tokens: 128, overlap_tokens: 16 }
            embed: { dimensions: 64, batch: 8 }
            state: state-dir
            run: { prune: true, max_delete_fraction: 0.5 }
            """
        try withFile(yaml) { file in
            let c = try PipelineConfiguration.load(file: file)
            #expect(c.chunk.maxTokens == 128)
            #expect(c.embed.dimensions == 64)
            #expect(c.run.prune)
            #expect(c.source.exclude == ["bad/**"])
            #expect(
                c.resolve(c.state).path
                    == file.deletingLastPathComponent().appendingPathComponent("state-dir").standardizedFileURL.path
            )
            #expect(c.resolve(c.source.path).lastPathComponent == "corpus")
        }
    }

    @Test func setOverridesAnyKey() throws {
        let c = try load(
            "chunk: { max_tokens: 300 }",
            overrides: ["chunk.max_tokens=128", "embed.provider=hash", "run.prune=true", "source.include=[\"*.md\"]"]
        )
        #expect(c.chunk.maxTokens == 128)
        #expect(c.run.prune)
        #expect(c.source.include == ["*.md"])
    }

    @Test func precisionIsFP32UnlessInt8IsAsked() throws {
        #expect(try PipelineConfiguration.load(file: nil).embed.precision == .fp32)
        let int8 = try load("embed: { provider: minilm, precision: int8 }")
        #expect(int8.embed.precision == .int8)
    }

    /// Hosted APIs get 256 requests in flight unless the file says otherwise; local models and servers 2.
    @Test(arguments: [
        ("embed: { provider: openai }", 256), ("embed: { provider: azure-openai }", 256),
        ("embed: { provider: ollama }", 2), ("embed: { provider: tei }", 2), ("embed: { provider: minilm }", 2),
        ("", 2), ("embed: { provider: openai, parallelism: 16 }", 16), ("embed: { provider: tei, parallelism: 8 }", 8),
    ])
    func requestsInFlightDefaultToTheProvidersOwn(yaml: String, expected: Int) throws {
        let configuration = try load(yaml)
        #expect(configuration.embed.requestsInFlight == expected)
    }

    @Test func aProviderChosenByAnOverrideDecidesTheDefaultToo() throws {
        #expect(try load("", overrides: ["embed.provider=openai"]).embed.requestsInFlight == 256)
        #expect(try load("embed: { provider: openai }", overrides: ["embed.provider=tei"]).embed.requestsInFlight == 2)
    }

    @Test(arguments: [
        ("chunk: { max_tokenz: 3 }", "chunk.max_tokenz"),
        ("embed: { precision: fp16 }", "embed.precision"),
        ("chunk: { context: path }", "chunk.context"),
        ("chunk: { max_tokens: abc }", "chunk.max_tokens"),
        ("embed: { provider: nope }", "embed.provider"),
        ("chunk: { max_tokens: 20, overlap_tokens: 30 }", "overlap_tokens"),
        ("bogus: 1", "bogus"),
        ("[1, 2]", "mapping"),
    ])
    func errorsNameTheKey(yaml: String, mentioned: String) throws {
        do {
            _ = try load(yaml)
            Issue.record("expected a configuration error for \(yaml)")
        } catch let error as SluiceError {
            #expect(error.code == .configuration)
            #expect(error.message.contains(mentioned))
        }
    }
}

/// Values past what a key can mean are errors that name the key, never a trap later (a timeout of 1e30
/// seconds overflowed the Int64 of its Duration) or a silent acceptance (a share of 2).
@Suite struct ConfigurationRangeTests {
    @Test(arguments: [
        "extract.timeout_seconds=1e30", "embed.timeout_seconds=1e30", "embed.connect_timeout_seconds=1e12",
        "sink.timeout_seconds=inf", "run.max_delete_fraction=2", "embed.max_retry_after_seconds=1e9",
    ])
    func outOfRangeValuesAreRefused(_ override: String) {
        let key = String(override.prefix { $0 != "=" })
        #expect {
            _ = try PipelineConfiguration.load(file: nil, overrides: [override])
        } throws: { error in
            (error as? SluiceError)?.code == .configuration && (error as? SluiceError)?.message.contains(key) == true
        }
    }

    @Test(arguments: ["extract.timeout_seconds=86400", "run.max_delete_fraction=1", "sink.timeout_seconds=0.5"])
    func valuesAtTheLimitsAreTaken(_ override: String) throws {
        _ = try PipelineConfiguration.load(file: nil, overrides: [override])
    }
}
