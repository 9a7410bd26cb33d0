import Foundation

/// Runs a program to its end with its output collected in a file, not a pipe.
///
/// A child started at the same moment by another test (a `sluice run` paused at a debug hook, a server) can
/// inherit a pipe's write end and keep it open for as long as it lives; a read to the end of that pipe then
/// waits for the other child too, and on the cooperative pool it stalls every test waiting behind it (seen
/// once: the whole suite stalled on `openssl`'s output). A file is read once the program has exited, whoever
/// else holds it open.
public enum ChildOutput {
    /// How the program ended, and what it wrote to standard output (and standard error, when `mergingErrors`;
    /// otherwise standard error is discarded).
    public struct Result: Sendable {
        public var exit: ProcessExit
        public var output: Data
        public var text: String { String(decoding: output, as: UTF8.self) }
    }

    /// Runs `executable` with `arguments`, `input` on its standard input (nothing when nil), and waits for it.
    public static func run(
        _ executable: String,
        _ arguments: [String],
        input: Data? = nil,
        mergingErrors: Bool = false
    ) throws -> Result {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("sluice-child-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(at: folder) }
        let inputFile = folder.appendingPathComponent("in")
        let outputFile = folder.appendingPathComponent("out")
        try (input ?? Data()).write(to: inputFile)
        _ = FileManager.default.createFile(atPath: outputFile.path, contents: nil)
        let inputHandle = try FileHandle(forReadingFrom: inputFile)
        let outputHandle = try FileHandle(forWritingTo: outputFile)
        defer {
            try? inputHandle.close()
            try? outputHandle.close()
        }
        let null = try FileHandle(forWritingTo: URL(fileURLWithPath: "/dev/null"))
        defer { try? null.close() }
        // Started through `SpawnedChild`: no descriptor of this process reaches it, none is left here.
        let child = try SpawnedChild(
            executable,
            arguments,
            input: inputHandle.fileDescriptor,
            output: outputHandle.fileDescriptor,
            error: mergingErrors ? outputHandle.fileDescriptor : null.fileDescriptor
        )
        let exit = child.wait()
        return Result(exit: exit, output: try Data(contentsOf: outputFile))
    }
}
