import Foundation
import Testing

@testable import SluiceCore

/// The `extract.images.caption` keys, and what of them shapes an image's chunks.
@Suite struct PipelineConfigurationImageCaptionTests {
    func load(_ yaml: String, overrides: [String] = []) throws -> PipelineConfiguration {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "pipeline-caption-\(UInt32.random(in: 0...UInt32.max)).yaml"
        )
        try yaml.write(to: url, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: url) }
        return try PipelineConfiguration.load(file: url, overrides: overrides)
    }

    @Test func offByDefault() throws {
        let caption = try load("").extract.images.caption
        #expect(!caption.enabled)
        #expect(caption.provider == .openai && caption.effectiveModel == "gpt-4o-mini")
        #expect(caption.detail == "low" && caption.maxTokens == 300 && caption.maxImageBytes == 20 << 20)
        #expect(caption.revision == 1)
    }

    @Test func mappingForm() throws {
        let caption = try load(
            """
            extract:
              images:
                caption:
                  enabled: true
                  provider: ollama
                  model: llava
                  detail: high
                  prompt: "What is in the picture?"
                  max_tokens: 80
                  max_image_mb: 5
                  parallelism: 2
                  requests_per_minute: 30
                  timeout_seconds: 20
                  max_retries: 2
                  max_retry_after_seconds: 5
                  revision: 3
            """
        ).extract.images.caption
        #expect(caption.enabled && caption.provider == .ollama && caption.effectiveModel == "llava")
        #expect(caption.effectiveBaseURL == "http://127.0.0.1:11434/v1")
        #expect(caption.detail == "high" && caption.prompt == "What is in the picture?" && caption.maxTokens == 80)
        #expect(caption.maxImageMB == 5 && caption.parallelism == 2 && caption.requestsPerMinute == 30)
        #expect(caption.timeoutSeconds == 20 && caption.maxRetries == 2 && caption.maxRetryAfterSeconds == 5)
        #expect(caption.revision == 3)
    }

    @Test(arguments: [
        ("extract: { images: { caption: { detail: medium } } }", "extract.images.caption.detail"),
        ("extract: { images: { caption: { provider: someone } } }", "extract.images.caption.provider"),
        ("extract: { images: { caption: { colour: blue } } }", "extract.images.caption.colour"),
        ("extract: { images: { caption: { model: \"\" } } }", "extract.images.caption.model"),
        ("extract: { images: { caption: { prompt: \" \" } } }", "extract.images.caption.prompt"),
        (
            "extract: { images: { caption: { enabled: true, provider: azure-openai } } }",
            "extract.images.caption.base_url"
        ),
    ])
    func refused(_ yaml: String, key: String) throws {
        do {
            _ = try load(yaml)
            Issue.record("\(yaml) was accepted")
        } catch let error as SluiceError {
            #expect(error.code == .configuration && error.message.contains(key), "\(error)")
        }
    }

    /// Turning captions on, or raising their revision, processes the images again; their model and prompt
    /// do not (a change of either re-captions only on that request).
    @Test func shapingSettings() throws {
        let off = ShapingSettings(try load(""), extractors: [])
        #expect(off.values.keys.allSatisfy { !$0.hasPrefix("extract.images") })
        let on = ShapingSettings(try load("", overrides: ["extract.images.caption.enabled=true"]), extractors: [])
        #expect(on.values["extract.images.caption"] == "on" && on.values["extract.images.caption.revision"] == "1")
        #expect(on.isRead("extract.images.caption", by: "image") && !on.isRead("extract.images.caption", by: "pdf"))
        let otherModel = ShapingSettings(
            try load("", overrides: ["extract.images.caption.enabled=true", "extract.images.caption.model=gpt-4o"]),
            extractors: []
        )
        #expect(otherModel == on)
        let revised = ShapingSettings(
            try load("", overrides: ["extract.images.caption.enabled=true", "extract.images.caption.revision=2"]),
            extractors: []
        )
        #expect(revised != on)
    }
}
