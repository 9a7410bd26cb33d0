import Foundation
import SluiceCore
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `export -o` and `embed --output` write into their target, as a shell redirection does: a symbolic link
/// is written through (and stays a link), a hard link keeps sharing its inode, a named pipe (like a device
/// such as /dev/null) is written to and stays what it was, and the mode of an existing file is kept.
@Suite struct OutputFileCLITests {
    /// Runs `write(path)` (a sluice command writing to `path`) against each kind of existing target and
    /// checks that the target was written into, not replaced.
    private func expectWritesInto(
        _ ws: Workspace,
        _ label: String,
        sourceLocation: SourceLocation = #_sourceLocation,
        _ write: (String) async throws -> CommandResult
    ) async throws {
        let folder = ws.root.appendingPathComponent("out-\(label)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)

        // A private file (0600) behind a symbolic link.
        let real = folder.appendingPathComponent("real.jsonl")
        try Data("old\n".utf8).write(to: real)
        chmod(real.path, 0o600)
        let alias = folder.appendingPathComponent("alias.jsonl")
        try FileManager.default.createSymbolicLink(atPath: alias.path, withDestinationPath: "real.jsonl")
        let viaLink = try await write(alias.path)
        #expect(viaLink.exitCode == 0, "\(viaLink)", sourceLocation: sourceLocation)
        #expect(Self.kind(alias) == S_IFLNK, "\(label): the symbolic link was replaced", sourceLocation: sourceLocation)
        #expect(
            Self.mode(real) == 0o600,
            "\(label): mode \(String(Self.mode(real), radix: 8))",
            sourceLocation: sourceLocation
        )
        let written = try Data(contentsOf: real)
        #expect(
            written.count > 4 && !written.starts(with: Data("old\n".utf8)),
            "\(label): not written through the link",
            sourceLocation: sourceLocation
        )

        // Two names of one private inode.
        let first = folder.appendingPathComponent("first.jsonl")
        let second = folder.appendingPathComponent("second.jsonl")
        try Data("old\n".utf8).write(to: first)
        chmod(first.path, 0o600)
        link(first.path, second.path)
        let inode = Self.inode(first)
        let viaHardLink = try await write(first.path)
        #expect(viaHardLink.exitCode == 0, "\(viaHardLink)", sourceLocation: sourceLocation)
        #expect(
            Self.inode(first) == inode && Self.inode(second) == inode,
            "\(label): the hard link was broken",
            sourceLocation: sourceLocation
        )
        #expect(
            Self.mode(first) == 0o600,
            "\(label): mode \(String(Self.mode(first), radix: 8))",
            sourceLocation: sourceLocation
        )
        #expect(try Data(contentsOf: second) == written, "\(label)", sourceLocation: sourceLocation)

        // A named pipe, standing in for a device such as /dev/null: written to, and still a pipe.
        let fifo = folder.appendingPathComponent("pipe")
        #expect(mkfifo(fifo.path, 0o600) == 0)
        let reader = open(fifo.path, O_RDONLY | O_NONBLOCK)
        #expect(reader >= 0)
        defer { close(reader) }
        let viaPipe = try await write(fifo.path)
        #expect(viaPipe.exitCode == 0, "\(viaPipe)", sourceLocation: sourceLocation)
        #expect(Self.kind(fifo) == S_IFIFO, "\(label): the named pipe was replaced", sourceLocation: sourceLocation)
        var received = Data()
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = read(reader, &buffer, buffer.count)
            if n <= 0 { break }
            received.append(contentsOf: buffer[..<n])
        }
        #expect(
            received == written,
            "\(label): \(received.count) bytes through the pipe",
            sourceLocation: sourceLocation
        )
    }

    @Test("export -o writes into a symbolic link's target, a hard link and a named pipe, keeping their mode")
    func exportWritesIntoItsTarget() async throws {
        let ws = try Workspace("export-out")
        defer { ws.cleanUp() }
        try Corpus.write(
            "A short document.\n\nIt has two paragraphs, and it is exported.\n",
            to: ws.corpus.appendingPathComponent("a.txt")
        )
        let main = ws.target("main")
        try await ws.run(main, expecting: 0)
        try await expectWritesInto(ws, "export") { path in
            try await ws.sluice(["export", ws.pipeline.path] + main.arguments + ["-o", path])
        }
        // A new file is created with the mode the umask gives, as `sluice export > file` does.
        let fresh = ws.root.appendingPathComponent("fresh.jsonl")
        #expect(try await ws.sluice(["export", ws.pipeline.path] + main.arguments + ["-o", fresh.path]).exitCode == 0)
        #expect(Self.mode(fresh) == 0o666 & ~Self.umask(), "mode \(String(Self.mode(fresh), radix: 8))")
    }

    @Test("embed --output writes into a symbolic link's target, a hard link and a named pipe, keeping their mode")
    func embedWritesIntoItsTarget() async throws {
        let ws = try Workspace("embed-out")
        defer { ws.cleanUp() }
        let input = ws.root.appendingPathComponent("in.jsonl")
        try Data("{\"text\": \"first\"}\n{\"text\": \"second\"}\n".utf8).write(to: input)
        try await expectWritesInto(ws, "embed") { path in
            try await ws.sluice(["embed", "--provider", "hash", "--input", input.path, "--output", path])
        }
    }

    static func lstatOf(_ url: URL) -> Glibc.stat {
        var info = Glibc.stat()
        _ = lstat(url.path, &info)
        return info
    }

    static func kind(_ url: URL) -> mode_t { lstatOf(url).st_mode & S_IFMT }
    static func mode(_ url: URL) -> mode_t { lstatOf(url).st_mode & 0o7777 }
    static func inode(_ url: URL) -> UInt64 { UInt64(lstatOf(url).st_ino) }

    /// This process's umask (from /proc: setting it to read it would race other tests' file creation).
    static func umask() -> mode_t {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("Umask:") } ?? "Umask:\t0022"
        return mode_t(line.split(separator: "\t").last.flatMap { UInt32($0, radix: 8) } ?? 0o022)
    }
}
