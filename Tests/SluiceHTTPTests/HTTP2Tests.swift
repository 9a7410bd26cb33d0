import SluiceCore
import SluiceHTTP
import Testing

/// The client against a real HTTP/2 server (nghttpd) over TLS with a throwaway CA.
@Suite struct HTTP2Tests {
    static let page = Array("hello over HTTP/2\n".utf8)
    /// Several DATA frames (16 KiB each), so that concurrent streams interleave.
    static let blob = (0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 8) }

    let server: HTTP2Server
    init() async throws { server = try await HTTP2Server.launch(files: ["page.txt": Self.page, "blob.bin": Self.blob]) }

    private func trustingClient() -> HTTPClient {
        var configuration = HTTPClient.Configuration()
        configuration.caBundlePath = server.caBundlePath
        return HTTPClient(configuration: configuration)
    }

    @Test func getOverTLSNegotiatesHTTP2() async throws {
        let response = try await trustingClient().send(HTTPRequest(url: "\(server.baseURL)/page.txt"))
        #expect(response.status == 200)
        #expect(response.httpVersion == "2")
        #expect(response.body == Self.page)
        #expect(response.connectionsOpened == 1)
    }

    /// 20 requests at once on a fresh client share one connection (PIPEWAIT, multiplexing).
    @Test func concurrentRequestsAreMultiplexedOnOneConnection() async throws {
        let client = trustingClient()
        let responses = try await sendConcurrently(20, "\(server.baseURL)/page.txt", with: client, timeout: nil)
        #expect(responses.count == 20)
        #expect(responses.allSatisfy { $0.status == 200 && $0.httpVersion == "2" && $0.body == Self.page })
        #expect(responses.map(\.connectionsOpened).reduce(0, +) == 1)
        // And a later request reuses it.
        let again = try await client.send(HTTPRequest(url: "\(server.baseURL)/page.txt"))
        #expect(again.httpVersion == "2")
        #expect(again.connectionsOpened == 0)
    }

    /// Bodies of several DATA frames on 20 streams at once. With Debian 12's libcurl 7.88.1 about every
    /// second run one stream stalls with 98,304 of its 100,000 bytes until the timeout (curl's own CLI,
    /// `curl -Z`, did not stall in 16 runs against the same server): a known issue, kept visible here.
    @Test func concurrentLargeBodiesComplete() async throws {
        let client = trustingClient()
        await withKnownIssue("libcurl 7.88.1: a multiplexed stream may stall near its end", isIntermittent: true) {
            let responses = try await sendConcurrently(20, "\(server.baseURL)/blob.bin", with: client, timeout: .seconds(10))
            #expect(responses.allSatisfy { $0.status == 200 && $0.httpVersion == "2" && $0.body == Self.blob })
        }
    }

    private func sendConcurrently(_ count: Int, _ url: String, with client: HTTPClient, timeout: Duration?) async throws -> [HTTPResponse] {
        try await withThrowingTaskGroup(of: HTTPResponse.self) { group in
            for _ in 0..<count {
                group.addTask { try await client.send(HTTPRequest(url: url, timeout: timeout)) }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
    }

    /// The system store does not know the throwaway CA: verification stays on and fails for good.
    @Test func unknownCAFailsVerificationAndIsNotTransient() async throws {
        let error = await #expect(throws: SluiceError.self) {
            try await HTTPClient().send(HTTPRequest(url: "\(server.baseURL)/page.txt"))
        }
        #expect(error?.code == .io)
        #expect(error?.isTransient == false)
        // CURLE_PEER_FAILED_VERIFICATION.
        #expect(error?.message.contains("curl error 60") == true, "\(error?.message ?? "")")
        #expect(error?.message.contains("certificate") == true)
    }
}
