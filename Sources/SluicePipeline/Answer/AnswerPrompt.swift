import Foundation
import SluiceCore

/// The messages of one question to the chat model: the instructions, and the question after the numbered
/// passages that fit the budget, most relevant first. A pure value: no I/O, the same input gives the same
/// prompt.
package struct AnswerPrompt: Sendable, Hashable {
    /// The system message.
    package var instructions: String
    /// The user message: the numbered passages, then the question.
    package var user: String
    /// The passages in the prompt, numbered as there.
    package var sources: [AnswerSource]
    /// The tokens the passages take (their headers and separators included): at most the budget.
    package var passageTokens: Int

    /// What the model is told when `answer.system_prompt` does not say otherwise.
    package static let defaultInstructions = """
        You answer questions using only the numbered passages you are given. After each statement, cite the \
        passages that support it by their numbers in square brackets, such as [1] or [2][3]. If the passages \
        do not contain the answer, say that they do not, and do not make one up. Answer in the language of \
        the question.
        """

    /// A passage cut at the end is marked with this.
    static let cutMark = " …"

    /// The least room worth cutting a passage into; with less left, the passage is left out.
    static let smallestCut = 24

    /// Builds the prompt for `question` from `hits`.
    ///
    /// - Parameters:
    ///   - question: The user's question.
    ///   - hits: The retrieved passages, in any order; they are numbered by score, highest first.
    ///   - maxContextTokens: The most tokens the passages may take (counted with `counter`).
    ///   - counter: The tokenizer of the budget (cl100k_base for `sluice ask`).
    ///   - instructions: Replaces ``defaultInstructions`` when given.
    /// - Returns: The prompt; its ``sources`` are empty when no passage fits (or there were none).
    package init(
        question: String,
        hits: [SearchResult],
        maxContextTokens: Int,
        counter: any TokenCounter,
        instructions: String? = nil
    ) {
        self.instructions = instructions ?? Self.defaultInstructions
        // Highest score first; equal scores keep the store's order.
        let ranked = hits.enumerated().sorted { (a: (offset: Int, element: SearchResult), b) -> Bool in
            if a.element.score != b.element.score { return a.element.score > b.element.score }
            return a.offset < b.offset
        }
        var sources: [AnswerSource] = []
        var blocks: [String] = []
        var used = 0
        for (_, hit) in ranked {
            let text = hit.text.trimmingCharacters(in: .whitespacesAndNewlines)
            guard !text.isEmpty else { continue }
            var source = AnswerSource(number: sources.count + 1, result: hit)
            source.text = text
            let block = Self.block(source)
            let cost = counter.count(block)
            if used + cost <= maxContextTokens {
                used += cost
                sources.append(source)
                blocks.append(block)
                continue
            }
            let room = maxContextTokens - used
            if room >= Self.smallestCut, let cut = Self.cut(source, toFit: room, counter: counter) {
                used += counter.count(Self.block(cut))
                sources.append(cut)
                blocks.append(Self.block(cut))
            }
            break
        }
        self.sources = sources
        self.passageTokens = used
        self.user = "Passages:\n\n" + blocks.joined() + "Question: " + question
    }

    /// `[n] (location)\ntext\n\n`: one passage as the prompt holds it (separator included, so blocks add up).
    /// Only the header starts a line with `[` and a digit: a text line that does (`[2] (…)`, a footnote) is
    /// indented by a space, so no passage can forge another's number.
    static func block(_ source: AnswerSource) -> String {
        let location = source.location.map { $0.isNewline ? " " : $0 }
        var text = source.text
        if text.contains("[") {
            text = text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
                line.first == "[" && line.dropFirst().first?.isNumber == true ? " " + line : line
            }.joined(separator: "\n")
        }
        return "[\(source.number)] (\(String(location)))\n\(text)\n\n"
    }

    /// The longest start of the passage, cut at a word boundary (or, when not even the first word fits, at a
    /// character), whose block fits `room` tokens; nil when nothing does.
    static func cut(_ source: AnswerSource, toFit room: Int, counter: any TokenCounter) -> AnswerSource? {
        let text = source.text
        // Word ends (after each run of non-spaces): the places a cut may fall.
        var wordEnds: [String.Index] = []
        var index = text.startIndex
        while index < text.endIndex {
            guard let start = text[index...].firstIndex(where: { !$0.isWhitespace }) else { break }
            let end = text[start...].firstIndex(where: \.isWhitespace) ?? text.endIndex
            wordEnds.append(end)
            index = end
        }
        // One word longer than the room (a URL, a hash): cut by characters instead.
        let characterEnds = Array(text.indices.dropFirst()) + [text.endIndex]
        return cut(source, at: wordEnds, toFit: room, counter: counter)
            ?? cut(source, at: characterEnds, toFit: room, counter: counter)
    }

    /// The passage cut at the latest of `ends` (ascending; the last is the whole text, known not to fit) whose
    /// block fits `room`; nil when not even the first does.
    private static func cut(
        _ source: AnswerSource,
        at ends: [String.Index],
        toFit room: Int,
        counter: any TokenCounter
    ) -> AnswerSource? {
        func candidate(_ count: Int) -> AnswerSource {
            var cut = source
            cut.text = String(source.text[..<ends[count - 1]]) + cutMark
            cut.truncated = true
            return cut
        }
        // Binary search for the most pieces that fit (the cost grows with the pieces kept).
        var low = 0
        var high = ends.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if counter.count(block(candidate(middle))) <= room { low = middle } else { high = middle - 1 }
        }
        return low == 0 ? nil : candidate(low)
    }
}
