import Foundation
import SluiceCore
import SluiceHTTP

/// Writes a judged query set from an index (`sluice eval --generate N`): samples chunks, asks the answer
/// model (the pipeline's `answer` section, with its retries, limits and key) for one question per chunk
/// that the chunk answers, and records that chunk's document (and page) as the relevant one, with a phrase
/// of the chunk as `contains`.
///
/// Such a set shows regressions and compares configurations on the user's own corpus; it flatters keyword
/// search (the questions are phrased from the passage) and knows one relevant document per query
/// (docs/USAGE.md, "Retrieval quality").
package struct QuestionGenerator: Sendable {
    private let sink: any VectorSink
    private let chat: ChatClient
    private let model: String?

    /// Chunks with fewer words than this are not sampled: too little to ask about.
    static let minimumWords = 8
    /// The longest passage sent, in characters (chunks are far shorter unless `chunk.max_tokens` is huge).
    static let maximumPassage = 8000
    /// The longest question kept, in characters.
    static let maximumQuestion = 500

    /// What the model is told.
    static let instructions = """
        You write test questions for a search engine. Read the passage and write one question that the \
        passage answers, as a user who has not seen the passage would ask it: in your own words, not \
        copying its sentences. Reply with the question only, on one line.
        """

    /// - Throws: ``SluiceError/Code/configuration`` for an unusable `answer` section (Azure without
    ///   `base_url`, a key variable that is not set).
    package init(
        configuration: PipelineConfiguration.Answer,
        sink: any VectorSink,
        environment: [String: String] = ProcessInfo.processInfo.environment,
        client: HTTPClient? = nil
    ) throws {
        self.sink = sink
        self.chat = try ChatClient(configuration: configuration, environment: environment, client: client)
        self.model = configuration.effectiveModel
    }

    /// A chunk picked for a question.
    struct Sample: Sendable, Hashable {
        var rank: UInt64
        var id: VectorID
        var documentKey: String
        var ordinal: Int
        var page: Int?
        var text: String
    }

    /// `count` chunks of the store, the same ones for the same `seed` and the same index whatever order the
    /// store lists them in: the chunks of at least ``minimumWords`` words with the smallest hash of (seed,
    /// id), in that order.
    func sample(_ count: Int, seed: UInt64) async throws -> [Sample] {
        let picked = SampleBox(count)
        try await sink.exportAll { record in
            // White space as the hit rule squashes it: the phrase taken from it is found in the chunk.
            let text = String(decoding: RetrievalMetrics.squash(record.text), as: UTF8.self)
            guard text.split(separator: " ").count >= Self.minimumWords else { return }
            let rank = ContentHash(utf8: "\(seed)\u{0}\(record.id.rawValue)").high
            picked.offer(
                Sample(
                    rank: rank,
                    id: record.id,
                    documentKey: record.documentKey,
                    ordinal: record.ordinal,
                    page: record.metadata["page"]?.integer,
                    text: text
                )
            )
        }
        return picked.samples
    }

    /// Samples `count` chunks and asks for a question on each.
    ///
    /// - Parameter progress: Called after each question with the count done and the count asked for.
    /// - Returns: The queries, `g001`, `g002`, … in sample order, of kind `generated`; a chunk the model
    ///   gave no usable question for is left out.
    /// - Throws: ``SluiceError/Code/usage`` for a store without a chunk to ask about; the answer model's
    ///   errors (unreachable: ``SluiceError/Code/dependencyUnavailable``, a refused key:
    ///   ``SluiceError/Code/providerRefused``).
    package func generate(
        _ count: Int,
        seed: UInt64,
        progress: (Int, Int) -> Void = { _, _ in }
    ) async throws -> [JudgedQuery] {
        let samples = try await sample(count, seed: seed)
        guard !samples.isEmpty else {
            throw SluiceError(
                .usage,
                "the index holds no chunk of \(Self.minimumWords) words or more to ask about (run `sluice run` first)"
            )
        }
        let width = max(3, String(samples.count).count)
        var queries: [JudgedQuery] = []
        for (index, sample) in samples.enumerated() {
            try Task.checkCancellation()
            var place = "Document: \(sample.documentKey)"
            if let page = sample.page { place += ", page \(page)" }
            let prompt = AnswerPrompt(
                instructions: Self.instructions,
                user: place + "\n\nPassage:\n" + String(sample.text.prefix(Self.maximumPassage))
            )
            var reply = ""
            _ = try await chat.complete(prompt) { reply += $0 }
            progress(index + 1, samples.count)
            guard let question = Self.question(from: reply) else { continue }
            let number = String(repeating: "0", count: max(0, width - String(queries.count + 1).count))
            queries.append(
                JudgedQuery(
                    id: "g" + number + String(queries.count + 1),
                    query: question,
                    kind: "generated",
                    relevant: [
                        .init(key: sample.documentKey, page: sample.page, contains: Self.phrase(of: sample.text))
                    ],
                    note: "written by \(model ?? "the answer model") from chunk #\(sample.ordinal) (seed \(seed))"
                )
            )
        }
        return queries
    }

    /// The question in a model's reply: its first non-empty line, without quotes or a `Question:` label;
    /// nil when there is none.
    static func question(from reply: String) -> String? {
        guard
            var line = reply.split(whereSeparator: \.isNewline).map({ $0.trimmingCharacters(in: .whitespaces) })
                .first(where: { !$0.isEmpty })
        else { return nil }
        for label in ["Question:", "question:", "Q:"] where line.hasPrefix(label) {
            line = line.dropFirst(label.count).trimmingCharacters(in: .whitespaces)
        }
        let quotes: Set<Character> = ["\"", "'", "“", "”", "«", "»", "`"]
        while let first = line.first, quotes.contains(first) { line.removeFirst() }
        while let last = line.last, quotes.contains(last) { line.removeLast() }
        line = line.trimmingCharacters(in: .whitespaces)
        guard !line.isEmpty else { return nil }
        return String(line.prefix(maximumQuestion))
    }

    /// A phrase of about eight words from the middle of `text` (normalized, at most 80 characters): what a
    /// result must hold to count as the chunk.
    static func phrase(of text: String) -> String {
        let words = text.split(separator: " ")
        var length = min(8, words.count)
        let start = (words.count - length) / 2
        // Long words: fewer of them, from the same place.
        while length > 1, words[start..<start + length].joined(separator: " ").count > 80 { length -= 1 }
        return String(words[start..<start + length].joined(separator: " ").prefix(80))
    }
}

/// The smallest-ranked samples seen so far (the store calls its export body from one task at a time).
private final class SampleBox: @unchecked Sendable {
    private let count: Int
    private(set) var samples: [QuestionGenerator.Sample] = []
    private let lock = NSLock()

    init(_ count: Int) { self.count = count }

    func offer(_ sample: QuestionGenerator.Sample) {
        lock.lock()
        defer { lock.unlock() }
        guard samples.count < count || sample.rank < samples[samples.count - 1].rank else { return }
        let index = samples.firstIndex { ($0.rank, $0.id) > (sample.rank, sample.id) } ?? samples.count
        samples.insert(sample, at: index)
        if samples.count > count { samples.removeLast() }
    }
}

extension AnswerPrompt {
    /// A prompt of given messages, without passages (the question generator's).
    init(instructions: String, user: String) {
        self.init(question: "", hits: [], maxContextTokens: 0, counter: NoPassages(), instructions: instructions)
        self.user = user
    }

    /// Counts nothing: a prompt without passages has nothing to count.
    private struct NoPassages: TokenCounter {
        func count(_ text: Substring) -> Int { 0 }
    }
}
