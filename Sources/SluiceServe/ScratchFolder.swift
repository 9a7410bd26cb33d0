import Foundation
import SluiceCore

#if canImport(Glibc)
import Glibc
#endif

/// The server's private folder for its runs' progress files: made by `mkdtemp` under `$TMPDIR` with a
/// name no one can guess beforehand, mode 0700, and failing rather than reusing anything already there — a
/// symlink planted at a predictable name (`sluice-serve-<pid>`) cannot redirect what the server writes.
enum ScratchFolder {
    static func make() throws -> URL {
        let template = FileManager.default.temporaryDirectory.appendingPathComponent("sluice-serve-XXXXXX").path
        var bytes = Array(template.utf8CString)
        let made = bytes.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        guard made != nil else {
            throw SluiceError(
                .dependencyUnavailable,
                "cannot create the server's scratch folder under $TMPDIR: \(String(cString: strerror(errno)))"
            )
        }
        let path = String(decoding: bytes.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return URL(fileURLWithPath: path, isDirectory: true)
    }
}
