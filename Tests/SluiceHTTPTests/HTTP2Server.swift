import Foundation
import SluiceCore
import SluiceTesting

#if canImport(Glibc)
import Glibc
#endif

/// A real HTTP/2 server for the client's tests: `nghttpd` (Debian's `nghttp2-server`) on 127.0.0.1 over
/// TLS, with a throwaway CA and server certificate made by `openssl` in a temporary folder. It serves the
/// files of ``documents``. Killed with SIGKILL on ``stop()``, when the value is released, or when the test
/// process dies.
final class HTTP2Server: @unchecked Sendable {
    let port: Int
    /// The PEM file of the throwaway CA that signed the server's certificate.
    let caBundlePath: String
    /// The document root.
    let documents: URL
    private let folder: URL
    private let process: Process
    private let lifeline: FileHandle
    private let serverPID: pid_t

    /// Makes the certificates, writes `files` (name → bytes) into the document root, starts `nghttpd`
    /// and waits until it accepts connections. Blocks: call ``launch(files:)`` from async code.
    init(files: [String: [UInt8]]) throws {
        folder = try TemporaryDirectory.make("sluice-h2")
        documents = folder.appendingPathComponent("htdocs")
        try FileManager.default.createDirectory(at: documents, withIntermediateDirectories: true)
        for (name, bytes) in files {
            try Data(bytes).write(to: documents.appendingPathComponent(name))
        }
        caBundlePath = folder.appendingPathComponent("ca.pem").path
        let key = folder.appendingPathComponent("server.key").path
        let certificate = folder.appendingPathComponent("server.pem").path
        try Self.makeCertificates(in: folder, ca: caBundlePath, key: key, certificate: certificate)

        port = try Self.freePort()
        // nghttpd does not watch its stdin, so a shell stands between: it starts nghttpd, prints its pid
        // and kills (and reaps) it with SIGKILL once the lifeline (its stdin) closes, even when the test
        // process died.
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = [
            "-c",
            #"nghttpd "$@" </dev/null >/dev/null 2>&1 & server=$!; echo "PID $server"; cat >/dev/null; kill -9 $server; wait $server"#,
            "sh", "--address=127.0.0.1", "--htdocs=\(documents.path)", "\(port)", key, certificate,
        ]
        let pid: Int
        (lifeline, pid) = try process.runWithLifeline(reporting: "PID", what: "nghttpd (Debian package nghttp2-server)")
        serverPID = pid_t(pid)
        guard Self.waitForListener(port: port, within: .seconds(15)) else {
            stop()
            throw SluiceError(.io, "nghttpd did not listen on port \(port) within 15 s; is nghttp2-server installed?")
        }
    }

    /// Starts the server from async code, on a thread of its own (it runs `openssl` and waits).
    static func launch(files: [String: [UInt8]]) async throws -> HTTP2Server {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try HTTP2Server(files: files) }) }.start()
        }
    }

    deinit { stop() }

    /// `https://127.0.0.1:<port>`.
    var baseURL: String { "https://127.0.0.1:\(port)" }

    /// Kills nghttpd (SIGKILL: a child of a Foundation Process may block SIGTERM) and its shell.
    func stop() {
        if serverPID > 0 { kill(serverPID, SIGKILL) }
        try? lifeline.close()
        // The shell too: it ends by itself only once its stdin (the lifeline) reaches EOF, and a process
        // started meanwhile by another test may hold a copy of the pipe's write end. Waiting for that
        // EOF here (often in a deinit, on one of the two threads of the cooperative pool) once hung the
        // whole suite.
        kill(process.processIdentifier, SIGKILL)
        ProcessExit.wait(for: process)
        try? FileManager.default.removeItem(at: folder)
    }

    /// A CA (`ca.pem`) and a server certificate for 127.0.0.1 and localhost signed by it, P-256 keys,
    /// valid for two days.
    private static func makeCertificates(in folder: URL, ca: String, key: String, certificate: String) throws {
        let caKey = folder.appendingPathComponent("ca.key").path
        let request = folder.appendingPathComponent("server.csr").path
        let extensions = folder.appendingPathComponent("server.ext")
        try """
        basicConstraints = critical, CA:FALSE
        keyUsage = critical, digitalSignature
        extendedKeyUsage = serverAuth
        subjectAltName = IP:127.0.0.1, DNS:localhost

        """.write(to: extensions, atomically: true, encoding: .utf8)
        let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        try openssl(
            ["req", "-x509"] + ec + [
                "-keyout", caKey, "-out", ca, "-days", "2", "-subj", "/CN=Sluice test CA",
                "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
            ]
        )
        try openssl(["req"] + ec + ["-keyout", key, "-out", request, "-subj", "/CN=localhost"])
        try openssl([
            "x509", "-req", "-in", request, "-CA", ca, "-CAkey", caKey, "-CAcreateserial", "-days", "2",
            "-extfile", extensions.path, "-out", certificate,
        ])
    }

    private static func openssl(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["openssl"] + arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let exit = ProcessExit.wait(for: process)
        guard exit.status == 0, !exit.signaled else {
            throw SluiceError(.io, "openssl \(arguments.prefix(2).joined(separator: " ")) failed (\(exit.status))")
        }
    }

    /// A port that was free a moment ago (bound to port 0, then released).
    private static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw SluiceError(.io, "socket: errno \(errno)") }
        defer { close(fd) }
        var address = loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                bind(fd, socketAddress, length) == 0 && getsockname(fd, socketAddress, &length) == 0
            }
        }
        guard bound else { throw SluiceError(.io, "bind: errno \(errno)") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Tries to connect every 50 ms until one succeeds or `limit` passes.
    private static func waitForListener(port: Int, within limit: Duration) -> Bool {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = loopback(port: port)
            let connected = withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
                }
            }
            close(fd)
            if connected { return true }
            usleep(50_000)
        }
        return false
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return address
    }
}
