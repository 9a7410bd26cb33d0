import Foundation
import SluiceCore
import Testing

@testable import SluicePipeline

/// Answers held to their sources: an answer that cites no passage is not passed off as one, the passages
/// come back in the order the answer used them, and made-up numbers and quotes are marked.
extension AnswererTests {
    static func transcript(_ answerer: Answerer, _ question: String) async throws -> AnswerTranscript {
        var transcript = AnswerTranscript()
        for try await event in answerer.answer(question) { transcript.take(event) }
        return transcript
    }

    static let valves = [
        "valves.md": "The sluice valve opens at dawn and closes at dusk.",
        "weather.md": "Rain is expected in the afternoon over the valves.",
    ]

    @Test func anAnswerCitingNoPassageIsNotInTheSources() async throws {
        let chat = try await ChatStandIn(["--answer", "The valve opens at noon, I believe."])
        let answerer = try Self.answerer(chat, sink: try await Self.index(Self.valves))
        var texts: [String] = []
        var transcript = AnswerTranscript()
        for try await event in answerer.answer("When does the sluice valve open?") {
            if case .text(let piece) = event { texts.append(piece) }
            transcript.take(event)
        }
        #expect(texts.isEmpty, "an uncited answer must not be streamed as an answer")
        let json = transcript.jsonObject
        #expect(json["answer"] is NSNull)
        #expect((json["reason"] as? String)?.contains("not in the sources") == true)
        #expect(json["withheld_answer"] as? String == "The valve opens at noon, I believe.")
    }

    @Test func passagesComeBackInTheOrderTheAnswerUsedThem() async throws {
        let chat = try await ChatStandIn(["--answer", "It rains [2], and the valve opens at dawn [1][2]."])
        let answerer = try Self.answerer(chat, sink: try await Self.index(Self.valves))
        let transcript = try await Self.transcript(answerer, "When does the sluice valve open in the rain?")
        #expect(transcript.sources.count == 2)
        #expect(transcript.sources.map(\.number) == [2, 1])
        #expect(transcript.sources.allSatisfy { $0.cited })
        #expect(transcript.answer == "It rains [2], and the valve opens at dawn [1][2].")
    }

    @Test func madeUpNumbersAndQuotesAreMarked() async throws {
        let answer = #"The passage says "the valve opens at noon" [1], and storms come [7]. It was built in [1871]."#
        let chat = try await ChatStandIn(["--answer", answer])
        let answerer = try Self.answerer(chat, sink: try await Self.index(Self.valves))
        let transcript = try await Self.transcript(answerer, "When does the sluice valve open?")
        let check = try #require(transcript.jsonObject["check"] as? [String: Any])
        #expect(check["cited"] as? [Int] == [1])
        #expect(check["unknown_citations"] as? [Int] == [7])
        let quotes = try #require(check["unsupported_quotes"] as? [[String: Any]])
        #expect(quotes.count == 1)
        #expect(quotes.first?["text"] as? String == "the valve opens at noon")
        #expect(quotes.first?["cited"] as? [Int] == [1])
        #expect(transcript.jsonObject["answer"] as? String == answer, "a cited answer is kept, with its marks")
    }
}
