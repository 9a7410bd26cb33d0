import ArgumentParser
import Foundation
import SluiceCore
import SluiceExtract

#if canImport(Glibc)
import Glibc
#endif

/// `sluice-bench text`: plain-text extraction against the cost of merely reading the same bytes, one thread
/// each, in one run. Sluice does what its extract step does for a text file (open, read, XXH3-128, choose
/// the extractor, extract: strict UTF-8 validation, the binary check, the string); beside it `cat` reads
/// the files (the floor: open, read, close), `iconv -f UTF-8 -t UTF-8` reads and validates them (a C
/// program doing the same validation), and an in-memory copy of the bytes gives memory speed. Twice: over
/// the corpus's files, and over one large file made of them, where the per-file costs vanish. Prints MB/s
/// of CPU time (user + system; medians of `--repeats`), CPU µs per file, and the ratios.
struct TextBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "text",
        abstract: "Plain-text extraction vs cat, iconv and memory speed (MB/s of CPU, one thread each)."
    )

    @Option(help: "A folder of text files (a corpus from `sluice-bench corpus`).") var corpus: String
    @Option(help: "The size of the one large file made of the corpus's files, in MB; 0 to skip.") var largeMB = 64
    @Option(help: "Timed passes per side (the median is reported); at least 3.") var repeats = 3

    func validate() throws {
        guard repeats >= 3 else { throw ValidationError("--repeats must be at least 3 (medians of 3 or more)") }
    }

    func run() throws {
        let files = try Self.files(in: corpus)
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("sluice-text-bench-\(getpid())")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: work) }
        var inputs = [("\(files.count) files", files)]
        if largeMB > 0 {
            inputs.append(("1 file of \(largeMB) MB", [try Self.largeFile(of: files, megabytes: largeMB, in: work)]))
        }
        print("corpus \(corpus); MB/s of CPU time, one thread each, medians of \(repeats)")
        print(
            "input              sluice MB/s  µs/file   cat MB/s  µs/file  iconv MB/s  copy MB/s  sluice/cat  sluice/iconv  sluice/copy"
        )
        for (label, paths) in inputs {
            let bytes = try paths.reduce(0) {
                $0 + (try FileManager.default.attributesOfItem(atPath: $1)[.size] as! Int)
            }
            let megabytes = Double(bytes) / 1e6
            // One untimed pass of each (page cache, page faults), then the timed ones, alternating.
            _ = try Self.sluicePass(paths)
            _ = try Self.childCPU("/bin/cat", paths)
            var sluice: [Double] = []
            var cat: [Double] = []
            var iconv: [Double] = []
            var copy: [Double] = []
            for _ in 0..<repeats {
                sluice.append(try Self.sluicePass(paths))
                cat.append(try Self.childCPU("/bin/cat", paths))
                iconv.append(try Self.childCPU("/usr/bin/iconv", ["-f", "UTF-8", "-t", "UTF-8"] + paths))
                copy.append(try Self.copyPass(paths))
            }
            let rates = [sluice, cat, iconv, copy].map { megabytes / median($0) }
            let perFile = [sluice, cat].map { median($0) / Double(paths.count) * 1e6 }
            var line = label.padding(toLength: 18, withPad: " ", startingAt: 0)
            line += f(rates[0], 0).leftAligned(12) + f(perFile[0], 1).leftAligned(9)
            line += f(rates[1], 0).leftAligned(11) + f(perFile[1], 1).leftAligned(9)
            line += f(rates[2], 0).leftAligned(12) + f(rates[3], 0).leftAligned(11)
            line +=
                (f(rates[0] / rates[1], 2) + "×").leftAligned(12) + (f(rates[0] / rates[2], 2) + "×").leftAligned(14)
            line += (f(rates[0] / rates[3], 3) + "×").leftAligned(13)
            print(line)
            let seconds = { (values: [Double]) in values.map { f($0, 4) }.joined(separator: " ") }
            print(
                "    \(f(megabytes, 2)) MB; CPU s: sluice \(seconds(sluice)); cat \(seconds(cat)); iconv \(seconds(iconv))"
            )
        }
    }

    /// Every regular file under `folder`, sorted by path.
    static func files(in folder: String) throws -> [String] {
        guard let walker = FileManager.default.enumerator(atPath: folder) else {
            throw ValidationError("cannot read \(folder)")
        }
        var paths: [String] = []
        while let path = walker.nextObject() as? String {
            let full = (folder as NSString).appendingPathComponent(path)
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: full, isDirectory: &isDirectory), !isDirectory.boolValue {
                paths.append(full)
            }
        }
        guard !paths.isEmpty else { throw ValidationError("\(folder) holds no files") }
        return paths.sorted()
    }

    /// The files' bytes, one after the other, repeated up to `megabytes` MB, in `work`/large.txt.
    static func largeFile(of files: [String], megabytes: Int, in work: URL) throws -> String {
        let url = work.appendingPathComponent("large.txt")
        guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
            throw ValidationError("cannot create \(url.path)")
        }
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        var written = 0
        while written < megabytes * 1_000_000 {
            for path in files where written < megabytes * 1_000_000 {
                let data = try Data(contentsOf: URL(fileURLWithPath: path))
                try handle.write(contentsOf: data)
                written += data.count
            }
        }
        return url.path
    }

    /// CPU seconds of this thread for Sluice's extract-step work on every file (as `ExtractStep` does it
    /// for plain text: read, hash, choose the extractor, extract). Throws if a file fails to extract.
    static func sluicePass(_ paths: [String]) throws -> Double {
        let registry = ExtractorRegistry.standard(configuration: .init())
        var sections = 0
        let start = WorkCPU.threadNanoseconds()
        for path in paths {
            let bytes = try DocumentFile.open(path).readAll()
            let hash = ContentHash(of: bytes)
            let input = ExtractionInput(key: path, fileURL: URL(fileURLWithPath: path), bytes: bytes)
            guard let extractor = registry.extractor(for: input), extractor.extractsInline else {
                throw ValidationError("\(path) is not plain text")
            }
            sections += try extractor.extract(input).sections.count + Int(hash.low & 1)
        }
        let seconds = Double(WorkCPU.threadNanoseconds() - start) / 1e9
        precondition(sections > 0)
        return seconds
    }

    /// CPU seconds of an in-memory copy of every file's bytes (read untimed first): memory speed.
    static func copyPass(_ paths: [String]) throws -> Double {
        let contents = try paths.map { try DocumentFile.open($0).readAll() }
        var checksum = 0
        let start = WorkCPU.threadNanoseconds()
        for bytes in contents {
            let copied = [UInt8](unsafeUninitializedCapacity: bytes.count) { buffer, count in
                bytes.withUnsafeBytes { source in
                    if let base = buffer.baseAddress, let from = source.baseAddress { memcpy(base, from, source.count) }
                }
                count = bytes.count
            }
            checksum &+= Int(copied.last ?? 0)
        }
        let seconds = Double(WorkCPU.threadNanoseconds() - start) / 1e9
        precondition(checksum >= 0)
        return seconds
    }

    /// CPU seconds (user + system) of `program arguments`, its output to /dev/null.
    static func childCPU(_ program: String, _ arguments: [String]) throws -> Double {
        let before = childrenCPU()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = arguments
        process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw ValidationError("\(program) failed with status \(process.terminationStatus)")
        }
        return childrenCPU() - before
    }

    private static func childrenCPU() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_CHILDREN.rawValue, &usage)
        func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }
}

extension String {
    /// The string right-aligned in `width` columns.
    fileprivate func leftAligned(_ width: Int) -> String {
        count >= width ? " " + self : String(repeating: " ", count: width - count) + self
    }
}
