import Foundation
import SluiceCore
import SluiceHTTP
import SluiceTesting
import Testing

@testable import SluiceEmbed

/// The image captioner against the vision stand-in (Sources/SluiceTesting/StandIns/vision_standin.py), which
/// checks the image it receives (data URL, format against the declared type, size, detail) and answers as
/// OpenAI's chat completions do, errors included.
@Suite struct ImageCaptionerTests {
    static let key = "sk-caption-\(UUID().uuidString)"
    static let variable = "SLUICE_TEST_CAPTION_KEY"

    static func server(_ arguments: [String] = []) async throws -> StandInServer {
        try await StandInServer.launch(script: "vision_standin.py", arguments: ["--api-key", key] + arguments)
    }

    static func captioner(
        _ server: StandInServer,
        key: String = key,
        configure: (inout ImageCaptioner.Settings) -> Void = { _ in }
    ) throws -> ImageCaptioner {
        var settings = ImageCaptioner.Settings()
        settings.enabled = true
        settings.baseURL = server.baseURL + "/v1"
        settings.model = "vision-test"
        settings.apiKeyEnv = variable
        configure(&settings)
        return try ImageCaptioner(
            settings: settings,
            environment: [variable: key],
            backoff: Backoff(base: .milliseconds(10), cap: .milliseconds(50))
        )
    }

    static func stats(_ server: StandInServer) async throws -> [String: Any] {
        let response = try await HTTPClient.shared.send(HTTPRequest(url: server.baseURL + "/stats"))
        return try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
    }

    static func control(_ server: StandInServer, _ body: String) async throws {
        _ = try await HTTPClient.shared.send(.postJSON(server.baseURL + "/control", body: Array(body.utf8)))
    }

    @Test("the image as a data URL with its type, size and detail; the caption and the server's model name")
    func captionsAnImage() async throws {
        let server = try await Self.server(["--require-model"])
        let photo = PNGWriter.photo(width: 64, height: 48)
        let captioner = try Self.captioner(server) { $0.detail = "high" }
        let caption = try await captioner.caption(photo, mediaType: "image/png")
        #expect(caption.text.contains("sandy beach") && caption.text.contains("png image, 64x48 pixels"), "\(caption)")
        #expect(caption.model == "vision-test")
        let last = try #require(try await Self.stats(server)["last_image"] as? [String: Any])
        #expect(last["bytes"] as? Int == photo.count && last["detail"] as? String == "high", "\(last)")
        #expect(last["prompt"] as? String == ImageCaptioner.Settings.defaultPrompt)
        #expect(captioner.requestStats.requests == 1 && captioner.requestStats.captions == 1)
    }

    @Test("over max_image_mb: refused with the reason, nothing sent; refused by the server for size: not retried")
    func tooLarge() async throws {
        let server = try await Self.server(["--max-image-bytes", "1000"])
        let photo = PNGWriter.photo(width: 64, height: 48)
        let local = try Self.captioner(server) { $0.maxImageMB = 0.0001 }
        await #expect(throws: ImageCaptioner.Refusal.self) { try await local.caption(photo, mediaType: "image/png") }
        do {
            _ = try await local.caption(photo, mediaType: "image/png")
        } catch let refusal as ImageCaptioner.Refusal {
            #expect(refusal.reason.contains("extract.images.caption.max_image_mb"), "\(refusal)")
        }
        #expect(try await Self.stats(server)["requests"] as? Int == 0)

        let remote = try Self.captioner(server)
        do {
            _ = try await remote.caption(photo, mediaType: "image/png")
            Issue.record("an image over the server's limit was captioned")
        } catch let refusal as ImageCaptioner.Refusal {
            #expect(refusal.reason.contains("Image too large"), "\(refusal)")
        }
        #expect(try await Self.stats(server)["requests"] as? Int == 1, "not retried")
    }

    @Test("401: providerRefused with the echoed key scrubbed; later calls refused without a request")
    func unauthorized() async throws {
        let server = try await Self.server()
        let wrong = "sk-wrong-\(UUID().uuidString)"
        let captioner = try Self.captioner(server, key: wrong)
        let photo = PNGWriter.photo(width: 8, height: 8)
        for _ in 0..<2 {
            do {
                _ = try await captioner.caption(photo, mediaType: "image/png")
                Issue.record("captioned with a wrong key")
            } catch let error as SluiceError {
                #expect(error.code == .providerRefused && !error.message.contains(wrong), "\(error)")
                #expect(error.message.contains("401"))
            }
        }
        #expect(try await Self.stats(server)["unauthorized"] as? Int == 1, "the second call sent nothing")
    }

    @Test("429 with Retry-After and a 503: retried, then captioned; a format the API refuses fails the image")
    func retriesAndRefusedFormat() async throws {
        let server = try await Self.server()
        try await Self.control(server, #"{"rate_limit_count": 1, "retry_after": "0", "fail_count": 1}"#)
        let captioner = try Self.captioner(server)
        let photo = PNGWriter.photo(width: 8, height: 8)
        _ = try await captioner.caption(photo, mediaType: "image/png")
        let stats = try await Self.stats(server)
        #expect(stats["rate_limited"] as? Int == 1 && stats["server_errors"] as? Int == 1 && stats["ok"] as? Int == 1)
        #expect(captioner.requestStats.rateLimited == 1 && captioner.requestStats.retries == 2)

        // A BMP (OpenAI takes PNG, JPEG, GIF and WebP): the image fails, the run goes on.
        let bmp: [UInt8] = Array("BM".utf8) + [UInt8](repeating: 0, count: 64)
        do {
            _ = try await captioner.caption(bmp, mediaType: "image/bmp")
            Issue.record("a BMP was captioned")
        } catch let error as SluiceError {
            #expect(error.code == .extractionFailed && error.message.contains("unsupported image"), "\(error)")
        }
    }

    @Test("settings that do not hold: no base URL for Azure, an unset key variable, a non-http URL")
    func settings() async throws {
        var azure = ImageCaptioner.Settings()
        azure.provider = .azureOpenAI
        #expect(throws: SluiceError.self) { try ImageCaptioner(settings: azure, environment: [:]) }
        var unset = ImageCaptioner.Settings()
        unset.apiKeyEnv = "SLUICE_TEST_CAPTION_UNSET"
        do {
            _ = try ImageCaptioner(settings: unset, environment: [:])
            Issue.record("an unset key variable was accepted")
        } catch let error as SluiceError {
            #expect(error.code == .configuration && error.message.contains("SLUICE_TEST_CAPTION_UNSET"))
        }
        var ftp = ImageCaptioner.Settings()
        ftp.baseURL = "ftp://example.com"
        #expect(throws: SluiceError.self) { try ImageCaptioner(settings: ftp, environment: [:]) }
    }
}
