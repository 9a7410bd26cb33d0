import Foundation
import SluiceCore
import SluiceTesting
import Testing

@testable import SluiceSinks

/// Issue 37: a store's answer quoted in an error never carries the store's key, whatever form the
/// server echoed it in (`http_echo.py`'s `/echo` answers with the request's headers, key included).
@Suite struct StoreHTTPRedactionTests {
    static let key = "qdrant/\(UUID().uuidString.lowercased())+K="

    struct Nothing: Decodable { var never: String }

    @Test(arguments: [("api-key", key), ("x-chroma-token", key), ("Authorization", "Bearer \(key)")])
    func anEchoedKeyIsRedactedFromTheError(header: (String, String)) async throws {
        let server = try await StandInServer.launch(script: "http_echo.py")
        let http = StoreHTTP(
            baseURL: server.baseURL,
            headers: [header],
            maxRetries: 0,
            timeout: .seconds(30),
            label: "test"
        )
        let error = await #expect(throws: SluiceError.self) {
            _ = try await http.decode(Nothing.self, "GET", "/echo")
        }
        let message = error?.description ?? ""
        #expect(message.contains("unexpected answer") && message.contains("<redacted>"), "\(message)")
        let uuid = String(Self.key.dropFirst(7).prefix(36))
        #expect(!message.lowercased().contains(uuid), "\(header.0): the key is in \(message)")
    }
}
