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
    /// - Parameter inputs: what the command reads (files, or folders such as a store's or a state's): an
    ///   output that is one of them, or inside one, is refused before anything is truncated (`export -o
    ///   STORE/data.mdb` would empty the index it reads, `embed --input f --output f` its own input).
    /// - Throws: ``SluiceError/Code/usage`` (exit 1) with the reason (`permission denied`, `is a
    ///   directory`, no such folder, one of the inputs).
    static func open(_ path: String, inputs: [URL] = []) throws -> FileHandle {
        if path == "-" { return .standardOutput }
        try refuseOverwriting(inputs, with: path)
        var fd: Int32
        repeat { fd = Glibc.open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o666) } while fd < 0 && errno == EINTR
        guard fd >= 0 else {
            throw SluiceError(
                .usage,
                "cannot write \(DisplayEscaping.escaped(path)): \(String(cString: strerror(errno)))"
            )
        }
        return FileHandle(fileDescriptor: fd, closeOnDealloc: true)
    }

    /// Checks, before a command does work it would lose, that `path` can be opened for writing (its folder
    /// exists, it is not a folder) and is none of `inputs`.
    /// - Throws: ``SluiceError/Code/usage``, as ``open(_:inputs:)``.
    static func check(_ path: String, inputs: [URL] = []) throws {
        if path == "-" { return }
        try refuseOverwriting(inputs, with: path)
        // Opened as the write will open it, without truncating; a file made only to check is removed again
        // (a command that fails later leaves no empty output behind).
        var existing = stat()
        let existed = stat(path, &existing) == 0
        // A FIFO or a device is not probed: opening and closing a FIFO would end its reader (EOF) before
        // the real write, which would then wait for a reader forever.
        if existed && (existing.st_mode & S_IFMT) != S_IFREG { return }
        var fd: Int32
        repeat {
            fd = Glibc.open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o666)
        } while fd < 0 && errno == EINTR
        guard fd >= 0 else {
            throw SluiceError(
                .usage,
                "cannot write \(DisplayEscaping.escaped(path)): \(String(cString: strerror(errno)))"
            )
        }
        Glibc.close(fd)
        if !existed { unlink(path) }
    }

    /// Refuses `path` when it names an existing file that is one of `inputs` (the same device and inode: a
    /// link or another spelling of the same file included), or lies inside an input folder.
    private static func refuseOverwriting(_ inputs: [URL], with path: String) throws {
        var target = stat()
        let exists = stat(path, &target) == 0
        let targetFolder = URL(fileURLWithPath: path).deletingLastPathComponent().resolvingSymlinksInPath().path
        for input in inputs {
            var held = stat()
            guard stat(input.path, &held) == 0 else { continue }
            let isFolder = (held.st_mode & S_IFMT) == S_IFDIR
            let same = exists && target.st_dev == held.st_dev && target.st_ino == held.st_ino
            let inside = isFolder && (targetFolder + "/").hasPrefix(input.resolvingSymlinksInPath().path + "/")
            if same || inside {
                throw SluiceError(
                    .usage,
                    "will not write \(DisplayEscaping.escaped(path)): it is \(same ? "" : "inside ")what this command reads (\(DisplayEscaping.escaped(input.path)))"
                )
            }
        }
    }
}
