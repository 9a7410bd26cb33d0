import Foundation
import SluiceCore
import SluiceExtract

#if canImport(Glibc)
import Glibc
#endif

// `sluice-extract-worker OPTIONS-JSON`: the extract worker process on its own, what `sluice extract-worker`
// runs, in an executable that links only what extraction needs. `sluice run` starts one per
// `extract.parallelism` when it finds this executable beside itself (else its own hidden subcommand).
//
// Why a second executable: a worker's start is a fixed cost per process, and most of it is the dynamic
// loader binding shared libraries and the kernel mapping them. `sluice` itself also links the HTTP client
// (libcurl), libpq, OpenBLAS, LMDB and the HTTP server's Swift packages, which a worker never calls;
// without them it starts in about half the CPU (docs/BENCHMARKS.md, 2026-11-27).

// No fixed mmap threshold here (`sluice` sets one, ResidentMemoryReleaser): with it, every buffer of Tesseract
// over 128 KB is mapped and unmapped anew on every page, 20% more CPU per OCR'd page than the `tesseract`
// CLI spends on the same images. glibc's own threshold rises to keep those buffers in the heap.
let arguments = CommandLine.arguments
guard arguments.count == 2,
    let options = try? JSONDecoder().decode(ExtractWorkerProtocol.Options.self, from: Data(arguments[1].utf8))
else {
    FileHandle.standardError.write(
        Data("usage: sluice-extract-worker OPTIONS-JSON (started by `sluice run`, not by hand)\n".utf8)
    )
    exit(RunExitCode.usage.rawValue)
}
exit(ExtractWorker.serve(options: options).rawValue)
