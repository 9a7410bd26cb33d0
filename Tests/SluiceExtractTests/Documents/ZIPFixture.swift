import Foundation
import SluiceTesting
import Testing

/// Reads and writes ZIP archives for tests of the ZIP-based extractors (a fixture with one part changed,
/// renamed or added), through Python's zipfile, which the test machines have: the archives under test are
/// never read by the code they test.
enum ZIPFixture {
    /// The archive's parts, in the archive's order.
    static func parts(of bytes: [UInt8]) throws -> [(name: String, data: Data)] {
        try withFolder { folder in
            let archive = folder.appendingPathComponent("in.zip")
            try Data(bytes).write(to: archive)
            try python(
                """
                import sys, zipfile
                folder = sys.argv[2]
                names = zipfile.ZipFile(sys.argv[1]).namelist()
                for i, name in enumerate(names):
                    open(f"{folder}/{i}.bin", "wb").write(zipfile.ZipFile(sys.argv[1]).read(name))
                open(f"{folder}/names", "w").write("\\n".join(names))
                """,
                archive.path,
                folder.path
            )
            let names = try String(contentsOf: folder.appendingPathComponent("names"), encoding: .utf8)
                .split(separator: "\n").map(String.init)
            return try names.enumerated().map { index, name in
                (name, try Data(contentsOf: folder.appendingPathComponent("\(index).bin")))
            }
        }
    }

    /// An archive of `parts`, in order, deflated; a `mimetype` entry stored, as OpenDocument and EPUB require.
    static func archive(_ parts: [(name: String, data: Data)]) throws -> [UInt8] {
        try withFolder { folder in
            for (index, part) in parts.enumerated() {
                try part.data.write(to: folder.appendingPathComponent("\(index).bin"))
            }
            try parts.map(\.name).joined(separator: "\n")
                .write(to: folder.appendingPathComponent("names"), atomically: true, encoding: .utf8)
            let target = folder.appendingPathComponent("out.zip")
            try python(
                """
                import sys, zipfile
                folder = sys.argv[1]
                names = open(f"{folder}/names").read().split("\\n")
                with zipfile.ZipFile(sys.argv[2], "w", zipfile.ZIP_DEFLATED) as out:
                    for i, name in enumerate(names):
                        method = zipfile.ZIP_STORED if name == "mimetype" else zipfile.ZIP_DEFLATED
                        out.writestr(name, open(f"{folder}/{i}.bin", "rb").read(), method)
                """,
                folder.path,
                target.path
            )
            return Array(try Data(contentsOf: target))
        }
    }

    /// The archive with every part passed through `change` (name and bytes in, name and bytes out).
    static func rewrite(_ bytes: [UInt8], _ change: (String, Data) throws -> (String, Data)) throws -> [UInt8] {
        try archive(try parts(of: bytes).map { try change($0.name, $0.data) })
    }

    /// The archive with the text of the part `name` changed.
    static func rewrite(_ bytes: [UInt8], part name: String, _ change: (String) -> String) throws -> [UInt8] {
        try rewrite(bytes) { partName, data in
            guard partName == name else { return (partName, data) }
            return (partName, Data(change(String(decoding: data, as: UTF8.self)).utf8))
        }
    }

    private static func withFolder<T>(_ body: (URL) throws -> T) throws -> T {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("zip-fixture-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        return try body(folder)
    }

    private static func python(_ script: String, _ arguments: String...) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["-c", script] + arguments
        try process.run()
        let exit = ProcessExit.wait(for: process)  // not waitUntilExit: see ProcessExit
        guard !exit.signaled, exit.status == 0 else {
            throw DocumentSamples.TestFailure("python3 exited \(exit.status) making a ZIP fixture")
        }
    }
}
