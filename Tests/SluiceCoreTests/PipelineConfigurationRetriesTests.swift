import Foundation
import Testing

@testable import SluiceCore

/// One naming rule for the retry settings: `max_retries` counts retries after the first attempt, in every
/// section; `sink.retries` (attempts) still works, with one notice naming the new key.
@Suite struct PipelineConfigurationRetriesTests {
    @Test func maxRetriesCountsRetriesInEverySection() throws {
        let configuration = try PipelineConfiguration.load(
            file: nil,
            overrides: ["embed.max_retries=2", "sink.max_retries=2", "answer.max_retries=2"]
        )
        #expect(configuration.embed.maxRetries == 2)
        #expect(configuration.sink.maxRetries == 2)
        #expect(configuration.answer.maxRetries == 2)
        #expect(configuration.notes.deprecations.isEmpty)
    }

    @Test func theDefaultStoreRetriesAreTheFormerAttemptsLessOne() {
        // `sink.retries: 5` (attempts) was the default: 4 retries.
        #expect(PipelineConfiguration.Sink().maxRetries == 4)
    }

    @Test func theDeprecatedAttemptsKeyStillWorksWithANotice() throws {
        let configuration = try PipelineConfiguration.load(file: nil, overrides: ["sink.retries=3"])
        #expect(configuration.sink.maxRetries == 2)
        #expect(configuration.notes.deprecations.count == 1)
        let notice = try #require(configuration.notes.deprecations.first)
        #expect(notice.contains("sink.retries is deprecated"))
        #expect(notice.contains("use sink.max_retries"))
        #expect(notice.contains("sink.max_retries: 2"))
    }

    /// As for every deprecated key (`extract.docx.*` beside `extract.zip.*`): which one was meant is not guessed.
    @Test func bothNamesAtOnceAreRefused() throws {
        let error = #expect(throws: SluiceError.self) {
            try PipelineConfiguration.load(file: nil, overrides: ["sink.retries=9", "sink.max_retries=1"])
        }
        #expect(error?.message.contains("both set") == true, "\(String(describing: error))")
    }

    @Test func attemptsBelowOneAreRefused() {
        #expect(throws: SluiceError.self) { try PipelineConfiguration.load(file: nil, overrides: ["sink.retries=0"]) }
        #expect(throws: SluiceError.self) {
            try PipelineConfiguration.load(file: nil, overrides: ["sink.max_retries=-1"])
        }
    }
}
