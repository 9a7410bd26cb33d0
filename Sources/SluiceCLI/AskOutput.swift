import Foundation
import Sluice
import SluiceCommandLine

/// What `sluice ask` prints: the answer's text as it arrives and the sources after it, or (`--json`) one
/// JSON object at the end with the fields of `search --json` for each source.
struct AskOutput {
    let json: Bool
    private var transcript = AnswerTranscript()
    private var answer: String { transcript.answer }

    init(json: Bool) {
        self.json = json
    }

    mutating func take(_ event: AnswerEvent) {
        transcript.take(event)
        switch event {
        case .text(let text):
            if !json { write(Self.displayed(text)) }
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
