import Foundation
import SluiceCore
import SluiceHTTP
import SluiceTesting
import Testing

@Suite struct HTTPClientTests {
    let server: StandInServer
    init() async throws { server = try await StandInServer.launch(script: "http_echo.py") }

    private func echo(_ response: HTTPResponse) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
    }

    @Test func postSendsBodyAndHeaders() async throws {
        let body = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let request = HTTPRequest.postJSON("\(server.baseURL)/echo", body: body, headers: [("X-Key", "v1")])
        let response = try await HTTPClient.shared.send(request)
        #expect(response.status == 200)
        let json = try echo(response)
        #expect(json["method"] as? String == "POST")
        #expect(json["body_length"] as? Int == body.count)
        let headers = try #require(json["headers"] as? [String: String])
        #expect(headers["x-key"] == "v1")
        #expect(headers["content-type"] == "application/json")
        #expect(headers["expect"] == nil)
        #expect(response.header("Content-Type") == "application/json")
    }

    @Test(arguments: ["PUT", "DELETE", "PATCH"])
    func otherMethodsAreSent(method: String) async throws {
        let response = try await HTTPClient.shared.send(
            HTTPRequest(method: method, url: "\(server.baseURL)/echo", body: Array("x".utf8))
        )
        #expect(try echo(response)["method"] as? String == method)
        #expect(try echo(response)["body_length"] as? Int == 1)
    }

    @Test func connectionIsKeptAliveAndReused() async throws {
        let client = HTTPClient()
        let first = try echo(try await client.send(HTTPRequest(url: "\(server.baseURL)/echo")))
        let second = try echo(try await client.send(HTTPRequest(url: "\(server.baseURL)/echo")))
        #expect(first["client_port"] as? Int == second["client_port"] as? Int)
    }

    @Test func anErrorStatusIsAResponseWithHeaders() async throws {
        let response = try await HTTPClient.shared.send(HTTPRequest(url: "\(server.baseURL)/status/503"))
        #expect(response.status == 503)
        #expect(response.header("x-test") == "yes")
        #expect(response.header("X-Multi") == "a, b")
        #expect(response.bodyText == "status body")
    }

    @Test func compressedResponsesAreDecoded() async throws {
        let response = try await HTTPClient.shared.send(HTTPRequest(url: "\(server.baseURL)/compressed"))
        #expect(response.header("content-encoding") == "gzip")
        #expect(response.body.count == Int(response.header("x-raw-length") ?? ""))
        #expect(response.bodyText.hasPrefix("compressible line"))
    }

    @Test func timeoutIsTransient() async throws {
        let error = await #expect(throws: SluiceError.self) {
            try await HTTPClient.shared.send(
                HTTPRequest(url: "\(server.baseURL)/slow?ms=3000", timeout: .milliseconds(300))
            )
        }
        #expect(error?.code == .timeout)
        #expect(error?.isTransient == true)
    }

    @Test func resetConnectionIsTransient() async throws {
        let error = await #expect(throws: SluiceError.self) {
            try await HTTPClient.shared.send(HTTPRequest(url: "\(server.baseURL)/reset"))
        }
        #expect(error?.code == .network)
        #expect(error?.isTransient == true)
    }

    @Test func refusedConnectionIsTransient() async throws {
        let other = try await StandInServer.launch(script: "http_echo.py")
        let url = "\(other.baseURL)/echo"
        other.stop()
        let error = await #expect(throws: SluiceError.self) {
            try await HTTPClient.shared.send(HTTPRequest(url: url))
        }
        #expect(error?.code == .network)
    }

    @Test func malformedURLIsNotTransientAndHidesTheQuery() async throws {
        let error = await #expect(throws: SluiceError.self) {
            try await HTTPClient.shared.send(HTTPRequest(url: "gopher://127.0.0.1/?key=secret"))
        }
        #expect(error?.isTransient == false)
        #expect(error?.message.contains("secret") == false)
    }

    @Test func bodyOverTheLimitIsTooLarge() async throws {
        var configuration = HTTPClient.Configuration()
        configuration.maxResponseBytes = 1_000
        let error = await #expect(throws: SluiceError.self) {
            try await HTTPClient(configuration: configuration).send(
                HTTPRequest(url: "\(server.baseURL)/big?bytes=100000")
            )
        }
        #expect(error?.code == .tooLarge)
    }

    @Test func missingCABundleFailsTLSSetUpNotSilently() async throws {
        var configuration = HTTPClient.Configuration()
        configuration.caBundlePath = "/nonexistent/ca.pem"
        configuration.connectTimeout = .seconds(2)
        // Plain HTTP does not use the bundle; the option must not break it.
        let response = try await HTTPClient(configuration: configuration).send(
            HTTPRequest(url: "\(server.baseURL)/echo")
        )
        #expect(response.status == 200)
    }

    /// Many requests are in flight at once: the client waits on sockets, never on pool threads. The
    /// server answers only once all 40 are waiting at the same time (504 after four minutes otherwise:
    /// beside `stress-ng --cpu 2` the 40 arrivals once spread over more than a minute), so the
    /// test proves the concurrency itself rather than timing it: two blocked pool threads would never get
    /// past 2 at once, however fast the machine.
    ///
    /// One request goes first: transfers wait for the first connection to a host to learn whether it
    /// multiplexes (CURLOPT_PIPEWAIT), so before any answer the others queue behind it by design.
    @Test func concurrentRequestsDoNotBlockEachOther() async throws {
        let client = HTTPClient()
        #expect(try await client.send(HTTPRequest(url: "\(server.baseURL)/echo")).status == 200)
        let key = UInt32.random(in: 0...UInt32.max)
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<40 {
                group.addTask {
                    try await client.send(
                        HTTPRequest(
                            url: "\(server.baseURL)/barrier?key=\(key)&n=40&timeout=240",
                            timeout: .seconds(300)
                        )
                    ).status
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(statuses == Array(repeating: 200, count: 40))
    }

    @Test func cancellationAbandonsTheTransfer() async throws {
        let task = Task { try await HTTPClient.shared.send(HTTPRequest(url: "\(server.baseURL)/slow?ms=120000")) }
        try await Task.sleep(for: .milliseconds(300))
        let cancelled = ContinuousClock.now
        task.cancel()
        let result = await task.result
        #expect(throws: CancellationError.self) { try result.get() }
        // Far below the 120 s answer, with room for a loaded (or briefly stopped) machine.
        #expect(ContinuousClock.now - cancelled < .seconds(60))
    }
}
