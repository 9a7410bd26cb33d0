import Foundation
import SluiceTesting

// The libFuzzer entry point of `sluice-fuzz` (built by scripts/fuzz.sh with -sanitize=fuzzer,address;
// libFuzzer brings `main`). The target is named by SLUICE_FUZZ_TARGET, read once.
nonisolated(unsafe) private var selected: FuzzTarget?

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    if selected == nil {
        let name = ProcessInfo.processInfo.environment["SLUICE_FUZZ_TARGET"] ?? ""
        guard let target = FuzzTarget(rawValue: name) else {
            let names = FuzzTarget.allCases.map(\.rawValue).joined(separator: ", ")
            FileHandle.standardError.write(Data("sluice-fuzz: set SLUICE_FUZZ_TARGET to one of: \(names)\n".utf8))
            exit(2)
        }
        selected = target
        // Writes this target's hostile seeds into the folder named, and stops (scripts/fuzz.sh, before it
        // fuzzes: libFuzzer reads its corpus before the first input).
        if let folder = ProcessInfo.processInfo.environment["SLUICE_FUZZ_SEEDS"], !folder.isEmpty {
            for seed in target.seeds {
                let url = URL(fileURLWithPath: folder).appendingPathComponent("hostile-" + seed.name)
                _ = FileManager.default.createFile(atPath: url.path, contents: Data(seed.bytes))
            }
            exit(0)
        }
    }
    let bytes = start.map { Array(UnsafeRawBufferPointer(start: $0, count: count)) } ?? []
    selected!.run(bytes)
    return 0
}
