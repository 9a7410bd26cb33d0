import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Test hooks, compiled into debug builds only: a pause at a named point of a document's processing, so
/// that a test can change the file at exactly that moment (replace it with a symbolic link) without
/// racing the machine's speed.
///
/// With `SLUICE_DEBUG_PAUSE_<POINT>` set to a marker, the thread that reaches `point` for a path containing
/// the marker writes `sluice-debug: paused at <POINT>` to standard error and waits until the file named by
/// `SLUICE_DEBUG_RESUME` exists. Points: `READ` (the pipeline, before it opens a document to read and hash
/// it), `REOPEN` (an extractor, before it opens the document's file again: PDF in process, and the
/// worker processes for PDF and images), `CHANGE` (a `sluice generation …` change of a sharded
/// deployment kept in a store, after it read the store's manifest and before it writes it; the path is the
/// state folder's) and `INDEX` (the local store, after it wrote its graph's temporary file and before it
/// renames it into place; the path is the store's folder).
package enum DebugPause {
    package static func at(_ point: String, path: @autoclosure () -> String) {
        #if DEBUG
        let environment = ProcessInfo.processInfo.environment
        guard let marker = environment["SLUICE_DEBUG_PAUSE_\(point)"], !marker.isEmpty, path().contains(marker),
            let resume = environment["SLUICE_DEBUG_RESUME"], !resume.isEmpty
        else { return }
        FileHandle.standardError.write(Data("sluice-debug: paused at \(point)\n".utf8))
        while access(resume, F_OK) != 0 { usleep(10_000) }
        #endif
    }
}
