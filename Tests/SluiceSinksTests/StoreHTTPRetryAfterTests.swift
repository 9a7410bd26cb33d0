import Foundation
import SluiceCore
import SluiceTesting
import Testing

@testable import SluiceSinks

/// A store's 429 with an absurd `Retry-After` (1e20 s, inf, an hour): the wait is capped, the process
/// does not trap converting it.
@Suite struct StoreHTTPRetryAfterTests {
    @Test(arguments: ["1e20", "inf", "3600"])
    func anAbsurdRetryAfterIsCapped(value: String) async throws {
        let server = try await StandInServer.launch(script: "http_echo.py")
        let http = StoreHTTP(
            baseURL: server.baseURL,
            headers: [],
            maxRetries: 1,
            timeout: .seconds(30),
            label: "test",
            maxRetryAfter: .milliseconds(300)
        )
        let error = await #expect(throws: SluiceError.self) {
            try await http.send("GET", "/status/429?retry_after=\(value)")
        }
        #expect(error?.code == .sinkFailed)
        #expect(error?.message.contains("gave up after 2 attempts") == true, "\(String(describing: error))")
    }
}
