import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A Linux process file descriptor (pidfd, Linux 5.3; glibc 2.36's `pidfd_open` and `pidfd_send_signal`,
/// found at run time) of a child: a signal sent through it reaches that very process or none, never another
/// one the kernel gave its pid after it was reaped, which `kill(pid, …)` could hit.
///
/// Opened only while the child is unreaped (``init(child:)`` checks with `waitid(…, WNOWAIT)` after opening),
/// so the descriptor names our child. Nil where the system has no pidfds: then nothing is signalled blind.
final class PIDFileDescriptor: @unchecked Sendable {
    private let descriptor: Int32

    private typealias Open = @convention(c) (pid_t, UInt32) -> Int32
    private typealias SendSignal = @convention(c) (Int32, Int32, UnsafeMutableRawPointer?, UInt32) -> Int32
    private static let open: Open? = dlsym(nil, "pidfd_open").map { unsafeBitCast($0, to: Open.self) }
    private static let sendSignal: SendSignal? = dlsym(nil, "pidfd_send_signal").map {
        unsafeBitCast($0, to: SendSignal.self)
    }

    /// A descriptor of the child `pid` of this process, or nil when it has been reaped already (or the
    /// system has no pidfds).
    init?(child pid: pid_t) {
        guard let open = Self.open else { return nil }
        let descriptor = open(pid, 0)
        guard descriptor >= 0 else { return nil }
        // Unreaped now (running or a zombie), so the pid is still our child's and the descriptor names it.
        var info = siginfo_t()
        guard waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 else {
            close(descriptor)
            return nil
        }
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    /// Sends `signal` to the process; false when it has ended (or the call failed).
    @discardableResult
    func send(_ signal: Int32) -> Bool {
        Self.sendSignal?(descriptor, signal, nil, 0) == 0
    }

    /// Waits until the process has ended (the descriptor becomes readable), at most `milliseconds`: true when
    /// it has.
    func waitForExit(milliseconds: Int32) -> Bool {
        var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        while true {
            let ready = poll(&entry, 1, milliseconds)
            if ready < 0, errno == EINTR { continue }
            return ready > 0
        }
    }
}
