import Foundation
import SluiceCore
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A child process started with `posix_spawn`, for the tests' children (`sluice` runs, stand-in servers, tools).
///
/// Foundation's `Process.run` adds one `posix_spawn` close action for every descriptor up to the highest one
/// open, and keeps a socket per child until it sees the child's death: with a test process holding over a
/// thousand descriptors it once crashed inside `posix_spawn` (2026-11-29). Here the child closes every
/// descriptor from 3 up with a single action (glibc's `posix_spawn_file_actions_addclosefrom_np`), so the cost
/// and the risk do not depend on how many are open, and the child holds no descriptor but its three standard
/// ones. No socket or pipe is left in the test process.
///
/// The child is reaped here (`waitpid` on its pid only), once it has ended: until then its pid cannot name
/// another process, so ``signal(_:)`` and the SIGKILL of a child dropped while running (`deinit`) can only
/// reach it. Signals are reset to their defaults and unblocked in the child (a dispatch thread blocks some,
/// and the test process ignores SIGPIPE).
public final class SpawnedChild: @unchecked Sendable {
    /// The child's process id.
    public let pid: pid_t
    /// How it ended, once reaped.
    private let ended = Mutex<ProcessExit?>(nil)

    /// Starts `executable` (a path) with `arguments`, its standard input, output and error on `input`,
    /// `output` and `error` (descriptors of this process, left open here), in `directory` when given, with
    /// `environment` (this process's when nil).
    /// - Throws: an `NSError` in the POSIX domain when `posix_spawn` fails.
    public init(
        _ executable: String,
        _ arguments: [String],
        environment: [String: String]? = nil,
        directory: String? = nil,
        input: Int32,
        output: Int32,
        error: Int32
    ) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // dup2 onto 0, 1, 2 clears close-on-exec on the copies; the same descriptor twice is dup2'ed as is.
        for (source, target) in [(input, Int32(0)), (output, 1), (error, 2)] {
            posix_spawn_file_actions_adddup2(&actions, source, target)
        }
        if let directory {
            guard let addChdir = Self.addChdir else {
                throw NSError(domain: NSPOSIXErrorDomain, code: Int(ENOSYS))
            }
            let rc = directory.withCString { addChdir(&actions, $0) }
            guard rc == 0 else { throw NSError(domain: NSPOSIXErrorDomain, code: Int(rc)) }
        }
        try Self.closeFromThree(&actions)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        var all = sigset_t()
        sigfillset(&all)
        sigdelset(&all, SIGKILL)
        sigdelset(&all, SIGSTOP)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let environment = (environment ?? ProcessInfo.processInfo.environment).map { "\($0.key)=\($0.value)" }
        var child: pid_t = 0
        let rc = Self.withCStrings([executable] + arguments) { argv in
            Self.withCStrings(environment) { envp in
                posix_spawn(&child, executable, &actions, &attributes, argv, envp)
            }
        }
        guard rc == 0 else { throw NSError(domain: NSPOSIXErrorDomain, code: Int(rc)) }
        pid = child
    }

    deinit {
        if ended.withLock({ $0 }) == nil {
            kill(pid, SIGKILL)
            wait()
        }
    }

    /// How the child ended, reaping it; nil while it runs.
    public var exit: ProcessExit? {
        ended.withLock { ended in
            if let ended { return ended }
            var status: Int32 = 0
            var result: pid_t
            repeat { result = waitpid(pid, &status, WNOHANG) } while result < 0 && errno == EINTR
            guard result == pid else { return nil }
            let signal = status & 0x7f
            ended =
                signal == 0
                ? ProcessExit(status: (status >> 8) & 0xff, signaled: false)
                : ProcessExit(status: signal, signaled: true)
            return ended
        }
    }

    /// Whether the child has not ended yet.
    public var isRunning: Bool { exit == nil }

    /// Sends `signal` to the child unless it has ended and been reaped.
    public func signal(_ signal: Int32) {
        ended.withLock { ended in
            if ended == nil { kill(pid, signal) }
        }
    }

    /// Blocks until the child has ended (polling every 2 ms, as ``ProcessExit/wait(for:)`` does) and returns how.
    @discardableResult
    public func wait() -> ProcessExit {
        while true {
            if let exit { return exit }
            usleep(2_000)
        }
    }

    private typealias ChdirAction =
        @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32

    /// glibc's `posix_spawn_file_actions_addchdir_np` (2.29), which Swift's Glibc module does not declare.
    private static let addChdir: ChdirAction? = symbol("posix_spawn_file_actions_addchdir_np")

    private static func symbol<T>(_ name: String) -> T? {
        guard let handle = dlopen(nil, RTLD_NOW), let pointer = dlsym(handle, name) else { return nil }
        return unsafeBitCast(pointer, to: T.self)
    }

    /// One action closing every descriptor from 3 up in the child; without glibc's, one per descriptor open now
    /// (what Foundation does).
    private static func closeFromThree(_ actions: inout posix_spawn_file_actions_t) throws {
        if PosixSpawnCloseFrom.isAvailable {
            guard PosixSpawnCloseFrom.add(&actions, from: 3) else {
                throw NSError(domain: NSPOSIXErrorDomain, code: Int(EINVAL))
            }
            return
        }
        let open = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        for fd in open.compactMap(Int32.init) where fd > 2 {
            posix_spawn_file_actions_addclose(&actions, fd)
        }
    }

    private static func withCStrings<R>(
        _ strings: [String],
        _ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>) -> R
    ) -> R {
        let copies: [UnsafeMutablePointer<CChar>?] = strings.map { strdup($0) } + [nil]
        defer { for copy in copies { free(copy) } }
        return copies.withUnsafeBufferPointer { body($0.baseAddress!) }
    }
}
