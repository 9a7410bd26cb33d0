import Foundation
import SluiceTesting
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The tests' child processes end with their tests: a ``SluiceProcess`` dropped while its child runs (a test
/// that failed before stopping it) kills that child through its pidfd.
@Suite struct SluiceProcessTests {
    @Test("a SluiceProcess dropped while its child runs kills that child")
    func droppedProcessKillsItsChild() async throws {
        let folder = try TemporaryDirectory.make("sluice-process")
        defer { TemporaryDirectory.remove(folder) }
        var child: SluiceProcess? = try SluiceProcess(
            ["600"],
            in: folder,
            outputs: folder,
            executable: URL(fileURLWithPath: "/bin/sleep")
        )
        let pid = try #require(child?.pid)
        // Our own descriptor of the child, to watch it without mistaking another process for it.
        let watch = try #require(PIDFileDescriptor(child: pid), "pidfds are available (Linux 5.3, glibc 2.36)")
        #expect(!watch.waitForExit(milliseconds: 0), "the child runs")
        child = nil
        // The event: the child's end, seen on the descriptor (the bound is a hang guard, not a wait).
        #expect(watch.waitForExit(milliseconds: 120_000), "the child \(pid) outlived its SluiceProcess")
        var info = siginfo_t()
        if waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 {
            #expect(info.si_code == CLD_KILLED && info._sifields._sigchld.si_status == SIGKILL, "killed with SIGKILL")
        }
    }
}
