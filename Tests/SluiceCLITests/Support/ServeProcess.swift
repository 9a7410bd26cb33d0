import Foundation
import SluiceClient
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif

/// A running `sluice serve` on a free port (`--port 0`: the server prints the port it bound), and raw
/// HTTP exchanges with it for what the client does not cover (headers, methods, bodies of any shape).
struct ServeProcess: Sendable {
    let process: SluiceProcess
    let baseURL: URL

    /// Starts `sluice serve` for `target` and waits (with a generous deadline, never a fixed sleep) until
    /// it accepts connections.
    static func start(
        _ ws: Workspace,
        _ target: Workspace.Target,
        _ extra: [String] = [],
        environment: [String: String?] = [:],
        launcher: [String] = []
    ) async throws -> ServeProcess {
        // A launcher (`prlimit --nofile=…`) runs the binary itself: it execs it, keeping the process id.
        let arguments = ["serve", ws.pipeline.path] + target.arguments + ["--port", "0"] + extra
        let process =
            try launcher.isEmpty
            ? ws.start(arguments, environment: environment)
            : ws.start(
                Array(launcher.dropFirst()) + [try SluiceExecutable.url().path] + arguments,
                environment: environment,
                executable: URL(fileURLWithPath: launcher[0])
            )
        let deadline = ContinuousClock.now + .seconds(600)
        while ContinuousClock.now < deadline {
            let out = (try? String(contentsOf: process.stdoutURL, encoding: .utf8)) ?? ""
            if let line = out.split(separator: "\n").first(where: { $0.hasPrefix("listening on ") }),
                let url = URL(string: String(line.dropFirst("listening on ".count)))
            {
                return ServeProcess(process: process, baseURL: url)
            }
            if !process.isRunning { break }
            try await Task.sleep(for: .milliseconds(10))
        }
        process.send(SIGKILL)
        throw TimedOut(what: "sluice serve did not start listening\n\(process.stderrSoFar.suffix(3000))")
    }

    func client(token: String? = nil) -> SluiceClient { SluiceClient(baseURL: baseURL, token: token) }

    /// The bound port.
    var port: Int { baseURL.port ?? 0 }

    /// SIGTERM, then the exit.
    func stop() async throws -> CommandResult {
        process.send(SIGTERM)
        return try await process.wait(timeout: .seconds(120))
    }

    /// One raw exchange: the status, the headers and the body.
    func exchange(
        _ method: String,
        _ path: String,
        body: Data? = nil,
        headers: [String: String] = [:]
    ) async throws -> (status: Int, headers: [String: String], body: Data) {
        var request = URLRequest(url: URL(string: baseURL.absoluteString + path)!)
        request.httpMethod = method
        request.httpBody = body
        // A body is JSON unless the test says otherwise (the server refuses other types: 415).
        if body != nil { request.setValue("application/json", forHTTPHeaderField: "Content-Type") }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let (data, response): (Data, URLResponse?) = try await withCheckedThrowingContinuation { continuation in
            URLSession.shared.dataTask(with: request) { data, response, error in
                if let error {
                    continuation.resume(throwing: error)
                } else {
                    continuation.resume(returning: (data ?? Data(), response))
                }
            }
            .resume()
        }
        let http = try #require(response as? HTTPURLResponse)
        var fields: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            if let name = name as? String, let value = value as? String { fields[name.lowercased()] = value }
        }
        return (http.statusCode, fields, data)
    }

    /// The `error.code` of a structured error body.
    static func errorCode(_ body: Data) -> String? {
        let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any]
        return (object?["error"] as? [String: Any])?["code"] as? String
    }
}
