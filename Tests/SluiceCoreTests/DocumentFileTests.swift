import Foundation
import SluiceCore
import SluiceTesting
import Testing

@Suite struct DocumentFileTests {
    /// `readAll` fills storage that is not zeroed first and probes for more past the stat size: every size
    /// around the 64 KiB probe gives back exactly the file's bytes.
    @Test(arguments: [0, 1, 4_095, 9_000, 65_535, 65_536, 65_537, 200_003])
    func readAllGivesTheFilesBytes(size: Int) throws {
        let folder = try TemporaryDirectory.make()
        defer { TemporaryDirectory.remove(folder) }
        var random = SplitMix64(seed: UInt64(size))
        let bytes = (0..<size).map { _ in UInt8.random(in: 0...255, using: &random) }
        let path = folder.appendingPathComponent("file.bin").path
        #expect(FileManager.default.createFile(atPath: path, contents: Data(bytes)))
        let file = try DocumentFile.open(path)
        #expect(try file.readAll() == bytes)
    }

    /// Bytes appended after the file was opened are read to the end.
    @Test func readAllReadsWhatWasAppendedAfterOpening() throws {
        let folder = try TemporaryDirectory.make()
        defer { TemporaryDirectory.remove(folder) }
        let url = folder.appendingPathComponent("growing.txt")
        try Data("first line\n".utf8).write(to: url)
        let file = try DocumentFile.open(url.path)
        let handle = try FileHandle(forWritingTo: url)
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(String(repeating: "more\n", count: 30_000).utf8))
        try handle.close()
        let bytes = try file.readAll()
        #expect(bytes.count == 11 + 150_000)
        #expect(bytes.suffix(5) == Array("more\n".utf8)[...])
    }
}
