import Foundation
import SluiceCore
import SluiceTesting
import Testing

@testable import SluicePipeline

/// `sluice eval --generate`'s pure parts: the sample, the question read from a reply, the phrase.
@Suite struct QuestionGeneratorTests {
    func generator(_ sink: InMemorySink) throws -> QuestionGenerator {
        var answer = PipelineConfiguration.Answer()
        answer.baseURL = "http://127.0.0.1:9/v1"
        return try QuestionGenerator(configuration: answer, sink: sink, environment: [:])
    }

    func sink(_ count: Int, reversed: Bool = false) async throws -> InMemorySink {
        let sink = InMemorySink()
        try await sink.prepare(embedder: EmbedderIdentity(provider: "hash", model: "h", dimensions: 2))
        var records = (0..<count).map { index in
            VectorRecord(
                id: VectorID(rawValue: String(format: "r%03d", index)),
                documentKey: "doc\(index % 7).txt",
                ordinal: index,
                text: "passage \(index) has more than eight words in it, as chunks do",
                vector: [1, 0],
                metadata: index % 2 == 0 ? ["page": .int(index / 2 + 1)] : [:]
            )
        }
        records.append(
            VectorRecord(
                id: VectorID(rawValue: "short"),
                documentKey: "s.txt",
                ordinal: 0,
                text: "too short",
                vector: [1, 0]
            )
        )
        if reversed { records.reverse() }
        try await sink.upsert(records)
        return sink
    }

    @Test func theSampleDependsOnTheSeedNotOnTheStoresOrder() async throws {
        let forward = try await generator(try await sink(40)).sample(10, seed: 7)
        let backward = try await generator(try await sink(40, reversed: true)).sample(10, seed: 7)
        #expect(forward.count == 10)
        #expect(forward.map(\.id) == backward.map(\.id))
        #expect(Set(forward.map(\.id)).count == 10)
        let other = try await generator(try await sink(40)).sample(10, seed: 8)
        #expect(other.map(\.id) != forward.map(\.id))
        // Short chunks are left out; a store smaller than asked gives what it has.
        let all = try await generator(try await sink(5)).sample(10, seed: 7)
        #expect(all.count == 5 && !all.contains { $0.id.rawValue == "short" })
        #expect(all.contains { $0.page != nil })
    }

    @Test(arguments: [
        ("What is the rate?", "What is the rate?"),
        ("\n  \"Why does xz use one core?\"  \nmore text", "Why does xz use one core?"),
        ("Question: How do gates open?", "How do gates open?"),
        ("“When is rain expected?”", "When is rain expected?"),
    ])
    func theQuestionIsTheReplysFirstLine(reply: String, question: String) {
        #expect(QuestionGenerator.question(from: reply) == question)
    }

    @Test func aReplyWithoutAQuestionGivesNone() {
        #expect(QuestionGenerator.question(from: "  \n \"\" \n") == nil)
        #expect(QuestionGenerator.question(from: String(repeating: "a", count: 900))?.count == 500)
    }

    @Test func thePhraseIsEightWordsFromTheMiddleAndInTheText() {
        let text = (1...20).map { "w\($0)" }.joined(separator: " ")
        #expect(QuestionGenerator.phrase(of: text) == "w7 w8 w9 w10 w11 w12 w13 w14")
        let long = (1...10).map { String(repeating: "x", count: 15) + "\($0)" }.joined(separator: " ")
        let phrase = QuestionGenerator.phrase(of: long)
        #expect(phrase.count <= 80 && long.contains(phrase) && phrase.split(separator: " ").count == 4)
        #expect(QuestionGenerator.phrase(of: "short text") == "short text")
        let word = String(repeating: "y", count: 120)
        #expect(QuestionGenerator.phrase(of: word) == String(repeating: "y", count: 80))
    }
}
