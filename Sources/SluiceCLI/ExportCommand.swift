import ArgumentParser
import Foundation
import Sluice
import SluiceCommandLine

struct ExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write every stored vector with id, metadata and text, sorted by id.",
        discussion:
            "A record whose vector is not finite (stored by an older version), or that the store cannot read (a damaged local store), is left out and named on standard error; the export then exits 2."
    )

    @OptionGroup var options: PipelineOptions

    @Option(help: "Output format (jsonl).")
    var format = "jsonl"

    @Option(name: .shortAndLong, help: ArgumentHelp("Output file (default: standard output).", valueName: "file"))
    var output: String?

    func run() async throws {
        try await withExitMapping {
            guard format == "jsonl" else { throw SluiceError(.usage, "--format: only jsonl is supported") }
            try await options.followGenerations()
            let configuration = try options.loadConfiguration()
            let components = try PipelineComponents.standard(configuration: configuration, readOnlySink: true)
            // Never into the store or the state it reads (`-o STORE/data.mdb` would empty the index).
            let writer = ExportWriter(
                handle: try OutputFile.open(output ?? "-", inputs: RunCommand.readPaths(configuration))
            )
            try await components.sink.exportAll { record in try writer.write(record) }
            try writer.flush()
            // Records the store could not read (a damaged local store): the others are written, as `search`
            // answers from them; said, and exit 2 (`sluice verify --repair` removes them).
            let unreadable = components.sink.readNotice
            if let unreadable {
                FileHandle.standardError.write(
                    Data("sluice: export: \(unreadable); `sluice verify --repair` removes them\n".utf8)
                )
            }
            if writer.skipped > 0 {
                // Written by a version that did not refuse such vectors: JSON cannot carry them, and one
                // must not stop the export of every other record.
                let examples =
                    writer.skippedExamples.map { DisplayEscaping.escaped($0) }.joined(separator: ", ")
                    + (writer.skipped > writer.skippedExamples.count ? ", …" : "")
                FileHandle.standardError.write(
                    Data(
                        ("sluice: export: skipped \(writer.skipped) records whose vectors are not finite (\(examples)); "
                            + "run `sluice run --reembed` to embed them again\n").utf8
                    )
                )
                throw ExitCode(.documentsFailed)
            }
            if unreadable != nil { throw ExitCode(.documentsFailed) }
        }
    }
}

/// Buffers JSON lines (one record per line, keys sorted, so two exports of equal stores are equal bytes).
final class ExportWriter: @unchecked Sendable {
    private let handle: FileHandle
    private var buffer = Data()
    private let encoder: JSONEncoder

    init(handle: FileHandle) {
        self.handle = handle
        encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    }

    /// Records left out because their vectors are not finite, and the first few as `document #ordinal`.
    private(set) var skipped = 0
    private(set) var skippedExamples: [String] = []

    func write(_ record: VectorRecord) throws {
        guard VectorMath.problem(record.vector) == nil else {
            skipped += 1
            if skippedExamples.count < 5 { skippedExamples.append("\(record.documentKey) #\(record.ordinal)") }
            return
        }
        buffer += try encoder.encode(record)
        buffer.append(0x0A)
        if buffer.count > 1 << 20 { try flush() }
    }

    func flush() throws {
        try handle.write(contentsOf: buffer)
        buffer.removeAll(keepingCapacity: true)
    }
}
