import Foundation
import Sluice
import SluiceCommandLine

/// What `sluice ask` prints: the answer's text as it arrives (or "not in the sources" when it cites none of
/// its passages), the sources in the order the answer used them, and what its citations do not hold up to
/// (a number that names no passage, a quotation its passage does not hold); or (`--json`) one JSON object at
/// the end with the fields of `search --json` for each source.
struct AskOutput {
    let json: Bool
    private var transcript = AnswerTranscript()
    private var check: AnswerCheck?
    private var answer: String { transcript.answer }

    init(json: Bool) {
        self.json = json
    }

    mutating func take(_ event: AnswerEvent) {
        transcript.take(event)
        switch event {
        case .text(let text):
            if !json { write(Self.displayed(text)) }
        case .checked(let check):
            self.check = check
            if !json, check.withheldAnswer != nil { write(Self.capitalized(AnswerTranscript.notInTheSources) + ".") }
        case .sources(let list):
            guard !json else { return }
            write(answer.hasSuffix("\n") ? "\nSources:\n" : "\n\nSources:\n")
            for source in list {
                let rerank = source.rerankScore.map { ", rerank " + String(format: "%.4f", $0) } ?? ""
                write(
                    "[\(source.number)] \(DisplayEscaping.escaped(source.location))  (score "
                        + String(format: "%.4f", source.score) + rerank + (source.cited ? ")\n" : ", not cited)\n")
                )
            }
            if let check { write(Self.marks(check, sources: list.count)) }
        case .finished(let finished):
            if !json, finished.finishReason == "length" {
                write("(the answer stopped at answer.max_answer_tokens: raise it for a longer one)\n")
            }
            if !json, let rerank = finished.rerank, !rerank.applied {
                write("(" + SearchCommand.rerankLine(rerank) + ")\n")
            }
        case .nothingRelevant(let why):
            if !json { write(DisplayEscaping.escaped(why) + "\n") }
        }
    }

    /// What the citations do not hold up to, a line each; empty when they all do.
    static func marks(_ check: AnswerCheck, sources: Int) -> String {
        var lines: [String] = []
        for number in check.unknownCitations {
            lines.append("! [\(number)] names no passage (the answer was given \(sources))")
        }
        for quote in check.unsupportedQuotes {
            let cited = quote.cited.isEmpty ? "any passage" : quote.cited.map { "[\($0)]" }.joined(separator: " ")
            lines.append("! the quotation “\(DisplayEscaping.escaped(quote.text))” is not in \(cited)")
        }
        return lines.map { $0 + "\n" }.joined()
    }

    static func capitalized(_ text: String) -> String { text.prefix(1).uppercased() + text.dropFirst() }

    /// Ends a line of text cut short by a failure, so that the error starts on a line of its own.
    func interrupted() {
        if !json, !answer.isEmpty, !answer.hasSuffix("\n") { write("\n") }
    }

    /// Prints the JSON object (`--json`, ``AnswerTranscript``); the text was printed as it came.
    func end() {
        guard json else { return }
        try? MachineReadable.print(transcript.jsonObject)
    }

    /// The model's text safe for a terminal: control characters escaped, line breaks kept.
    static func displayed(_ text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { DisplayEscaping.escaped($0) }
            .joined(separator: "\n")
    }

    private func write(_ text: String) {
        FileHandle.standardOutput.write(Data(text.utf8))
    }
}
