import ArgumentParser
import Foundation
import Sluice

struct ExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export", abstract: "Write every stored vector with id, metadata and text, sorted by id.")

    @OptionGroup var options: PipelineOptions

    @Option(help: "Output format (jsonl).")
    var format = "jsonl"

    @Option(name: .shortAndLong, help: ArgumentHelp("Output file (default: standard output).", valueName: "file"))
    var output: String?

    func run() async throws {
        try await withExitMapping {
            guard format == "jsonl" else { throw SluiceError(.usage, "--format: only jsonl is supported") }
            let configuration = try options.loadConfiguration()
            let components = try PipelineComponents.standard(configuration: configuration, readOnlySink: true)
            let writer = ExportWriter(handle: try OutputFile.open(output ?? "-"))
            try await components.sink.exportAll { record in try writer.write(record) }
            try writer.flush()
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

    func write(_ record: VectorRecord) throws {
        buffer += try encoder.encode(record)
        buffer.append(0x0A)
        if buffer.count > 1 << 20 { try flush() }
    }

    func flush() throws {
        try handle.write(contentsOf: buffer)
        buffer.removeAll(keepingCapacity: true)
    }
}
