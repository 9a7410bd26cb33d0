import Foundation
import SluiceCore
import SluiceHTTP
import SluiceTesting
import Testing

@testable import SluiceEmbed

/// OpenAI's 429 "Request too large for … on tokens per min (TPM)": the request can never succeed as it
/// is, however long the client waits.
extension RemoteEmbedderTests {
    @Test func aRequestTooLargeForTheTPMLimitIsSplitAndTheSmallerSizeRemembered() async throws {
        let server = try await StandInServer.launch(
            script: "openai_standin.py",
            arguments: ["--request-tpm-limit", "60", "--dims", "32"]
        )
        let embedder = try Self.embedder(server, key: nil) {
            $0.requestedDimensions = nil
            $0.maxRateLimitRetries = 3
        }
        let texts = Self.texts(12)
        let vectors = try await embedder.embed(texts)
        #expect(vectors == (try await Self.singly(embedder, texts)))
        let rejected = try await Self.stats(server)["request_too_large"] ?? 0
        #expect(rejected >= 1)
        #expect(embedder.requestStats?.rateLimited == 0, "a request that is too large is not a rate limit")
        // The next batch of the same size is cut before it is sent.
        let more = try await embedder.embed(Self.texts(12, prefix: "again"))
        #expect(more.count == 12)
        #expect(try await Self.stats(server)["request_too_large"] == rejected, "the smaller size was not remembered")
    }

    @Test func aSingleInputTooLargeForTheTPMLimitFailsAtOnceWithTheReason() async throws {
        let server = try await StandInServer.launch(
            script: "openai_standin.py",
            arguments: ["--request-tpm-limit", "5"]
        )
        let embedder = try Self.embedder(server, key: nil) { $0.maxRateLimitRetries = 3 }
        let error = await #expect(throws: SluiceError.self) {
            try await embedder.embed(["one input that is longer than five tokens, whatever the tokenizer says"])
        }
        #expect(error?.code == .embeddingFailed)
        #expect(error?.message.contains("Request too large") == true, "\(String(describing: error))")
        #expect(try await Self.stats(server)["requests"] == 1)
    }
}
