import Testing

@testable import SluiceCore

/// Loopback is parsed, not matched as a prefix (issue 37, item 7): `127.example.com` is a name.
@Suite struct LoopbackAddressTests {
    @Test(arguments: [
        "127.0.0.1", "127.1.2.3", "127.255.255.255", "::1", "[::1]", "0:0:0:0:0:0:0:1", "::ffff:127.0.0.1",
        "localhost", "LocalHost",
    ])
    func loopback(_ host: String) {
        #expect(LoopbackAddress.contains(host))
    }

    @Test(arguments: [
        "127.evil.example", "127.0.0.1.evil.example", "127.", "127.1", "0x7f000001", "2130706433", "127.0.0.256",
        "localhost.evil.example", "::2", "::ffff:10.0.0.1", "0.0.0.0", "::", "10.0.0.1", "", "[::1", "evil.example",
    ])
    func notLoopback(_ host: String) {
        #expect(!LoopbackAddress.contains(host))
    }

    @Test func theServeSettingParses() {
        var serve = PipelineConfiguration.Serve()
        for (host, loopback) in [("127.0.0.1", true), ("127.x.example", false), ("::1", true), ("0.0.0.0", false)] {
            serve.host = host
            #expect(serve.bindsLoopback == loopback, "\(host)")
        }
    }

    @Test func hostHeaders() {
        func split(_ value: String) -> String? {
            LoopbackAddress.splitHostPort(value).map { "\($0.host) \($0.port.map(String.init) ?? "-")" }
        }
        #expect(split("127.0.0.1:8080") == "127.0.0.1 8080")
        #expect(split("[::1]:9") == "[::1] 9")
        #expect(split("[::1]") == "[::1] -")
        #expect(split("name") == "name -")
        for bad in ["", ":80", "a:b", "a:80:1", "::1", "[::1]x", "a:99999", "a:+80"] {
            #expect(split(bad) == nil, "\(bad)")
        }
    }
}
