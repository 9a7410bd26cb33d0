import Foundation
import SluiceHTTP

/// The remote benchmark's reference: a client without a budget. `concurrency` workers each send the next
/// batch; after a 429 or a failure they sleep a fixed time and send the same batch again (headers ignored).
struct NaiveEmbeddingClient: Sendable {
    var concurrency: Int
    var retryMs: Int
    var batch: Int

    func send(_ texts: [String], to url: String) async throws {
        let client = HTTPClient()
        let batches = stride(from: 0, to: texts.count, by: batch).map {
            Array(texts[$0..<min(texts.count, $0 + batch)])
        }
        let next = Counter()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<concurrency {
                group.addTask {
                    while let index = next.take(below: batches.count) {
                        let body = try JSONSerialization.data(withJSONObject: [
                            "model": "text-embedding-3-small", "input": batches[index], "dimensions": 64,
                            "encoding_format": "base64",
                        ])
                        while true {
                            // A reset is a thrown transient error: retried like any failure.
                            if let response = try? await client.send(.postJSON(url, body: Array(body))),
                                response.isSuccess
                            {
                                break
                            }
                            try await Task.sleep(for: .milliseconds(retryMs))
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
    }
}
