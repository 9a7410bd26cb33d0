import Foundation
import SluiceChunk
import SluiceCore
import SluiceEmbed
import SluiceTesting
import Testing

@testable import SluicePipeline

/// The answering flow: retrieve, judge relevance, prompt, stream; nothing relevant → no request.
@Suite struct AnswererTests {
    static let embedder = HashEmbedder(dimensions: 384, tokenCounter: WordTokenCounter())

    static func index(_ texts: [String: String]) async throws -> InMemorySink {
        let sink = InMemorySink()
        try await sink.prepare(embedder: embedder.identity)
        var records: [VectorRecord] = []
        for (key, text) in texts.sorted(by: { $0.key < $1.key }) {
            let vector = await embedder.embed([text])[0]
            records.append(
                VectorRecord(
                    id: VectorID(rawValue: key),
                    documentKey: key,
                    ordinal: 0,
                    text: text,
                    vector: vector,
                    metadata: ["page": .int(2), "headings": .strings(["Guide", "Valves"])]
                )
            )
        }
        try await sink.upsert(records)
        return sink
    }

    static func answerer(_ chat: ChatStandIn, sink: InMemorySink, minScore: Double? = nil) throws -> Answerer {
        var configuration = chat.configuration()
        configuration.minScore = minScore
        return try Answerer(
            configuration: configuration,
            embedder: embedder,
            sink: sink,
            tokenCounter: AnswerPromptTests.tokenizer,
            chat: chat.client(configuration)
        )
    }

    static func events(_ answerer: Answerer, _ question: String) async throws -> [AnswerEvent] {
        var events: [AnswerEvent] = []
        for try await event in answerer.answer(question) { events.append(event) }
        return events
    }

    @Test func textThenTheCheckThenSourcesThenTheSummary() async throws {
        let chat = try await ChatStandIn()
        let sink = try await Self.index([
            "valves.md": "The sluice valve opens at dawn and closes at dusk.",
            "weather.md": "Rain is expected in the afternoon.",
        ])
        let events = try await Self.events(try Self.answerer(chat, sink: sink), "When does the sluice valve open?")
        guard case .finished(let summary) = events.last, case .sources(let sources) = events.dropLast().last,
            case .checked(let check) = events.dropLast(2).last
        else {
            Issue.record("expected text, then the check, then sources, then the summary: \(events)")
            return
        }
        #expect(check == AnswerCheck(cited: [1], unknownCitations: [], unsupportedQuotes: []))
        let text = events.dropLast(3).map { event -> String in
            guard case .text(let piece) = event else { return "<\(event)>" }
            return piece
        }.joined()
        #expect(text == "The passages say so [1].")
        #expect(sources.first?.documentKey == "valves.md")
        #expect(sources.first?.page == 2)
        #expect(sources.first?.headings == ["Guide", "Valves"])
        #expect(sources.map(\.cited) == [true] + Array(repeating: false, count: sources.count - 1))
        #expect(summary.model == "test-model")
        let last = try #require(try await chat.stats()["last"] as? [String: Any])
        #expect(last["passages"] as? Int == sources.count)
    }

    @Test func anEmptyIndexSaysSoWithoutARequest() async throws {
        let chat = try await ChatStandIn()
        let events = try await Self.events(try Self.answerer(chat, sink: InMemorySink()), "Anything?")
        guard events.count == 1, case .nothingRelevant(let reason) = events[0] else {
            Issue.record("expected only nothingRelevant: \(events)")
            return
        }
        #expect(reason.contains("sluice run"))
        #expect(try await chat.requests() == 0)
    }

    @Test func hitsBelowTheMinimumScoreSaySoWithoutARequest() async throws {
        let chat = try await ChatStandIn()
        let sink = try await Self.index(["a.md": "alpha beta gamma", "b.md": "delta epsilon"])
        let events = try await Self.events(try Self.answerer(chat, sink: sink, minScore: 1.5), "alpha")
        guard events.count == 1, case .nothingRelevant(let reason) = events[0] else {
            Issue.record("expected only nothingRelevant: \(events)")
            return
        }
        #expect(reason.contains("answer.min_score"))
        #expect(try await chat.requests() == 0)
    }

    @Test func aFailureEndsTheStreamWithTheError() async throws {
        let chat = try await ChatStandIn(["--status-first", "100", "--status", "500"])
        let sink = try await Self.index(["a.md": "alpha beta gamma"])
        var configuration = chat.configuration(maxRetries: 0)
        configuration.minScore = nil
        let answerer = try Answerer(
            configuration: configuration,
            embedder: Self.embedder,
            sink: sink,
            tokenCounter: AnswerPromptTests.tokenizer,
            chat: chat.client(configuration)
        )
        await #expect {
            _ = try await Self.events(answerer, "alpha")
        } throws: { error in
            (error as? SluiceError)?.code == .dependencyUnavailable
        }
    }
}
