import Foundation
import Sluice
import SluiceCommandLine

#if canImport(Glibc)
import Glibc
#endif

/// Where a command writes its output (`export -o`, `embed --output`, `run --stats-json`): into the named
/// file, as a shell redirection (`>`) does, never by replacing it with a new file.
///
/// Replacing (a temporary file renamed over the target) would turn a device such as /dev/null into a
/// regular file, cut a symbolic or hard link, and give a private (0600) file the default mode, leaving
/// exported document text readable by everyone. Opening with `O_WRONLY | O_CREAT | O_TRUNC` keeps the
/// target what it is: a link is written through, an existing file keeps its mode and owner. A new file
/// gets `0666` minus the umask, the mode `sluice export > file` gives it: whoever wants exports private
/// sets a umask (077) or creates the file first, and that mode is now kept.
enum OutputFile {
    /// Standard output for `-`, else the file at `path`, truncated (created if missing).
    /// - Throws: ``SluiceError/Code/io`` with the reason (`permission denied`, `is a directory`, …).
    static func open(_ path: String) throws -> FileHandle {
        if path == "-" { return .standardOutput }
        var fd: Int32
        repeat { fd = Glibc.open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o666) } while fd < 0 && errno == EINTR
        guard fd >= 0 else {
            throw SluiceError(.io, "cannot write \(DisplayEscaping.escaped(path)): \(String(cString: strerror(errno)))")
        }
        return FileHandle(fileDescriptor: fd, closeOnDealloc: true)
    }
}
