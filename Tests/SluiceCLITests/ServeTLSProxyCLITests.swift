import Foundation
import SluiceCore
import SluiceTesting
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// TLS for `sluice serve` through the recipe of docs/SERVE.md ("TLS"): stunnel (Debian's stunnel4) with
/// deploy/stunnel/sluice-serve.conf in front of the server bound to loopback. A client that trusts the
/// certificate reaches every route over HTTPS under the public name; one that does not, or that speaks
/// plain HTTP to the TLS port, gets nothing; a renewed certificate is served after SIGHUP, no restart.
@Suite(.serialized)
struct ServeTLSProxyCLITests {
    static let name = "sluice.test"
    static let token = "tls-proxy-token-5d1e"

    @Test("stunnel with the shipped config: HTTPS to the server on loopback; a new certificate after SIGHUP")
    func stunnelInFront() async throws {
        let stunnel = URL(fileURLWithPath: "/usr/bin/stunnel4")
        try #require(
            FileManager.default.isExecutableFile(atPath: stunnel.path),
            "stunnel is missing: apt-get install stunnel4 (scripts/setup.sh test)"
        )
        let ws = try Workspace("serve-tls-proxy")
        defer { ws.cleanUp() }
        let server = try await ServeCLITests.served(
            ws,
            ["--set", "serve.api_key_env=SLUICE_TEST_TOKEN", "--set", "serve.allowed_hosts=[\(Self.name)]"],
            environment: ["SLUICE_TEST_TOKEN": Self.token]
        )
        let tls = ws.file("tls")
        try FileManager.default.createDirectory(at: tls, withIntermediateDirectories: true)
        let (chain, key) = (tls.appendingPathComponent("fullchain.pem"), tls.appendingPathComponent("privkey.pem"))
        let first = tls.appendingPathComponent("first.pem")
        try await Self.selfSigned(certificate: first, key: key)
        try FileManager.default.copyItem(at: first, to: chain)

        // The shipped file, with this test's paths and ports. The test runs as whoever runs it, so it keeps
        // its privileges (the unit's setuid needs the stunnel4 user, which Debian's package creates).
        let port = try Self.freePort()
        let shipped = try String(
            contentsOf: Corpus.repositoryRoot.appendingPathComponent("deploy/stunnel/sluice-serve.conf"),
            encoding: .utf8
        )
        var config = shipped
        for (from, to) in [
            ("accept = 8443", "accept = 127.0.0.1:\(port)"),
            ("connect = 127.0.0.1:8080", "connect = 127.0.0.1:\(server.port)"),
            ("/etc/sluice/tls/fullchain.pem", chain.path), ("/etc/sluice/tls/privkey.pem", key.path),
            ("setuid = stunnel4\n", ""), ("setgid = stunnel4\n", ""),
        ] {
            #expect(config.contains(from), "deploy/stunnel/sluice-serve.conf no longer has \(from)")
            config = config.replacingOccurrences(of: from, with: to)
        }
        let configFile = ws.file("stunnel.conf")
        try config.write(to: configFile, atomically: true, encoding: .utf8)
        // SIGHUP and SIGTERM as systemd leaves them to a service: default actions, unblocked (the test
        // process may hand its children signals ignored or blocked, which survives exec).
        let reset =
            "import os, signal, sys\nfor s in (signal.SIGHUP, signal.SIGTERM): signal.signal(s, signal.SIG_DFL)\n"
            + "signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGHUP, signal.SIGTERM})\n"
            + "os.execvp(sys.argv[1], sys.argv[1:])"
        let proxy = Process()
        proxy.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        proxy.arguments = ["-c", reset, stunnel.path, configFile.path]
        _ = FileManager.default.createFile(atPath: ws.file("stunnel.log").path, contents: nil)
        let log = try FileHandle(forWritingTo: ws.file("stunnel.log"))
        proxy.standardOutput = log
        proxy.standardError = log
        proxy.standardInput = FileHandle.nullDevice
        try proxy.run()
        // Stopped whatever happens (SIGKILL: the test is done with it), and reaped.
        defer {
            kill(proxy.processIdentifier, SIGKILL)
            _ = ProcessExit.wait(for: proxy)
            try? log.close()
        }
        let url = "https://\(Self.name):\(port)"
        let resolve = ["--resolve", "\(Self.name):\(port):127.0.0.1"]
        let auth = ["-H", "Authorization: Bearer \(Self.token)"]
        // Until stunnel listens (its log says why if it never does).
        let health = try await Self.curl(resolve + ["--cacert", first.path, "\(url)/health"], until: { $0.exit == 0 })
        #expect(health.exit == 0 && health.output.contains("\"ok\""), "\(Self.log(ws))")

        let search = try await Self.curl(
            resolve + auth + [
                "--cacert", first.path, "-H", "Content-Type: application/json", "-d", #"{"query": "sluice gate"}"#,
                "\(url)/v1/search",
            ]
        )
        #expect(search.exit == 0 && search.output.contains("\"results\""), "\(search.output)")
        let refused = try await Self.curl(resolve + ["--cacert", first.path, "\(url)/v1/documents"])
        #expect(refused.output.contains("unauthorized"), "\(refused.output)")
        // Not trusted: curl refuses the certificate (60); plain HTTP to the TLS port gets no HTTP answer.
        let untrusted = try await Self.curl(resolve + ["\(url)/health"])
        #expect(untrusted.exit == 60, "\(untrusted)")
        let plain = try await Self.curl(["http://127.0.0.1:\(port)/health"])
        #expect(plain.exit != 0 && !plain.output.contains("\"ok\""), "\(plain)")

        // A renewed certificate (another key, another issuer): replace both files, SIGHUP, and new
        // connections get it while the old one is no longer trusted by a client of the new.
        let second = tls.appendingPathComponent("second.pem")
        try FileManager.default.removeItem(at: key)
        try await Self.selfSigned(certificate: second, key: key)
        try FileManager.default.removeItem(at: chain)
        try FileManager.default.copyItem(at: second, to: chain)
        #expect(kill(proxy.processIdentifier, SIGHUP) == 0)
        let renewed = try await Self.curl(
            resolve + ["--cacert", second.path, "\(url)/health"],
            until: { $0.exit == 0 }
        )
        #expect(renewed.exit == 0 && renewed.output.contains("\"ok\""), "\(Self.log(ws))")
        let stale = try await Self.curl(resolve + ["--cacert", first.path, "\(url)/health"])
        #expect(stale.exit == 60, "\(stale)")

        let result = try await server.stop()
        #expect(result.exitCode == 0, "\(result.stderr.suffix(2000))")
        #expect(!result.stderr.contains(Self.token))
    }

    /// A loopback port that was free a moment ago (bound to port 0, then released).
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw SluiceError(.io, "socket: errno \(errno)") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                bind(fd, socketAddress, length) == 0 && getsockname(fd, socketAddress, &length) == 0
            }
        }
        guard bound else { throw SluiceError(.io, "bind: errno \(errno)") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    static func log(_ ws: Workspace) -> String {
        (try? String(contentsOf: ws.file("stunnel.log"), encoding: .utf8)) ?? "(no stunnel log)"
    }

    /// A self-signed certificate for ``name`` by the openssl CLI (a fresh P-256 key each time).
    static func selfSigned(certificate: URL, key: URL) async throws {
        let result = try await run(
            "/usr/bin/openssl",
            [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2",
                "-subj", "/CN=\(name)", "-addext", "subjectAltName=DNS:\(name)", "-keyout", key.path,
                "-out", certificate.path,
            ]
        )
        try #require(result.exit == 0, "openssl: \(result.output)")
    }

    /// `curl -sS ARGUMENTS` (10 s at most), again every 100 ms while `until` is false, for at most 30 s.
    static func curl(
        _ arguments: [String],
        until done: (_ result: (exit: Int32, output: String)) -> Bool = { _ in true }
    ) async throws -> (exit: Int32, output: String) {
        let deadline = ContinuousClock.now + .seconds(30)
        while true {
            let result = try await run("/usr/bin/curl", ["-sS", "--max-time", "10"] + arguments)
            if done(result) || ContinuousClock.now > deadline { return result }
            try await Task.sleep(for: .milliseconds(100))
        }
    }

    /// Runs a program to its end: its exit status and its output (standard output and error together).
    static func run(_ path: String, _ arguments: [String]) async throws -> (exit: Int32, output: String) {
        // Off the cooperative pool's threads: the program may take its time (curl waits for the proxy).
        let result = try await Task.detached { try ChildOutput.run(path, arguments, mergingErrors: true) }.value
        return (result.exit.status, result.text)
    }
}
