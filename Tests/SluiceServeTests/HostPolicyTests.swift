import Testing

@testable import SluiceServe

/// The `Host` check of a loopback-bound server (DNS rebinding, issue 37 item 2).
@Suite struct HostPolicyTests {
    let policy = HostPolicy(allowedHosts: ["search.example", "Proxy.Example:8443"])

    @Test(arguments: [
        "127.0.0.1:8080", "localhost:8080", "LOCALHOST:8080", "[::1]:8080", "127.9.9.9:8080", "search.example",
        "search.example:443", "proxy.example:8443", "PROXY.example:8443",
    ])
    func allowed(_ host: String) {
        #expect(policy.allows(host, port: 8080))
    }

    @Test(arguments: [
        "evil.example", "evil.example:8080", "127.0.0.1:8081", "127.0.0.1", "localhost", "127.evil:8080",
        "127.0.0.1.evil.example:8080", "proxy.example", "proxy.example:443", "", ":8080", "[::1]:8080:1",
        "search.example.evil",
    ])
    func refused(_ host: String) {
        #expect(!policy.allows(host, port: 8080))
    }

    @Test func noHostIsNotABrowser() {
        #expect(policy.allows(nil, port: 8080))
    }

    @Test func portEightyMayBeLeftOut() {
        #expect(policy.allows("localhost", port: 80))
        #expect(policy.allows("127.0.0.1:80", port: 80))
    }
}
