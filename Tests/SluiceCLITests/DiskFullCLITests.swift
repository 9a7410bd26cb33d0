import Foundation
import SluiceTesting
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// docs/DESIGN.md §7: a full disk is not a bug. A run whose local store fills its file system stops taking
/// documents, marks none failed and exits 6; with room again, the next run completes and the store agrees
/// with the checkpoint. The store lives on a small tmpfs (mounting needs root, as on the CI machines).
@Suite(.serialized)
struct DiskFullCLITests {
    static func mount(_ path: String, megabytes: Int) -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/mount")
        process.arguments = ["-t", "tmpfs", "-o", "size=\(megabytes)m", "tmpfs", path]
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return false }
        let exit = ProcessExit.wait(for: process)  // not waitUntilExit: see ProcessExit
        return !exit.signaled && exit.status == 0
    }

    static func unmount(_ path: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/umount")
        process.arguments = [path]
        guard (try? process.run()) != nil else { return }
        ProcessExit.wait(for: process)
    }

    static let canMount: Bool = {
        let probe = FileManager.default.temporaryDirectory.appendingPathComponent("sluice-mount-probe-\(getpid())")
        try? FileManager.default.createDirectory(at: probe, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: probe) }
        guard mount(probe.path, megabytes: 1) else { return false }
        unmount(probe.path)
        return true
    }()

    @Test(
        "a local store that fills its disk: exit 6, nothing marked failed; with room, the next run completes",
        .enabled(if: canMount, "mounting a tmpfs needs root")
    )
    func fullDiskExitsSix() async throws {
        let ws = try Workspace("disk-full")
        defer { ws.cleanUp() }
        var rng = SeededGenerator(seed: 0xD15C)
        for index in 0..<120 {
            try Corpus.write(
                Corpus.document(index: index, markdown: false, bytes: 24_000, rng: &rng),
                to: ws.corpus.appendingPathComponent("docs/d\(index).txt")
            )
        }
        let small = ws.file("small")
        try FileManager.default.createDirectory(at: small, withIntermediateDirectories: true)
        try #require(Self.mount(small.path, megabytes: 1))
        defer { Self.unmount(small.path) }
        var target = ws.target("main")
        target.sink = ["--set", "sink.path=\(small.appendingPathComponent("index").path)"]

        let full = try await ws.sluice(ws.runArguments(target))
        #expect(full.exitCode == 6, "\(full)")
        #expect(full.stderr.contains("no space left on device"), "\(full.stderr.suffix(2000))")
        // Documents in flight keep the placeholder every attempt writes before the store (`interrupted`), as
        // after a signal or a provider's refusal; none failed for a reason of its own.
        let status = try await ws.status(target)
        #expect(
            status.failures.values.allSatisfy { $0.hasPrefix("interrupted:") },
            "a full disk marks no document failed:\n\(status.text)"
        )

        // Room again: the store moves to a larger file system, and the run completes.
        let large = ws.file("large")
        try FileManager.default.createDirectory(at: large, withIntermediateDirectories: true)
        try #require(Self.mount(large.path, megabytes: 1024))
        defer { Self.unmount(large.path) }
        try FileManager.default.copyItem(
            at: small.appendingPathComponent("index"),
            to: large.appendingPathComponent("index")
        )
        target.sink = ["--set", "sink.path=\(large.appendingPathComponent("index").path)"]
        let again = try await ws.sluice(ws.runArguments(target))
        #expect(again.exitCode == 0, "\(again.stderr.suffix(3000))")
        let verify = try await ws.sluice(["verify", ws.pipeline.path] + target.arguments)
        #expect(verify.exitCode == 0, "the store agrees with the checkpoint: \(verify)")
        #expect(try await ws.status(target).documents == ["indexed": 120])
    }
}
