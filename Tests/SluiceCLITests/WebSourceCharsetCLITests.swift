import Foundation
import SluiceCore
import SluiceTesting
import Testing

/// The character set an HTTP `Content-Type` declares reaches the extractors, where session 46's campaign
/// found it dropped (each seen failing before the fix): a `windows-1251` page without a `<meta>` read as
/// windows-1252, a `text/plain; charset=ISO-8859-1` page failed as invalid UTF-8.
@Suite(.serialized)
struct WebSourceCharsetCLITests {
    @Test(
        "pages are decoded by their Content-Type's charset: HTML without <meta>, plain text, CSV; a <meta> loses to it"
    )
    func contentTypeCharset() async throws {
        let ws = try Workspace("web-charset")
        defer { ws.cleanUp() }
        let site = WebSourceCLITests.Site(server: try await StandInServer.launch(script: "web_server.py"))
        defer { site.server.stop() }
        let base = site.server.baseURL
        let host = "127.0.0.1:\(site.server.port)"
        let russian = "Шлюз открыт для судов"  // "the lock is open for ships"
        try await site.put(
            "/ru.html",
            bytes: try Self.encoded("<html><body><p>\(russian).</p></body></html>", "WINDOWS-1251"),
            type: "text/html; charset=windows-1251"
        )
        try await site.put(
            "/fr.txt",
            bytes: try Self.encoded("Le café près de l'écluse.\n", "ISO-8859-1"),
            type: "text/plain; charset=ISO-8859-1"
        )
        try await site.put(
            "/rows.csv",
            bytes: try Self.encoded("name,place\nÉcluse,Grenoble\n", "ISO-8859-1"),
            type: "text/csv; charset=\"iso-8859-1\""
        )
        // The transport outranks a <meta> (the HTML standard's order): the bytes are windows-1251.
        try await site.put(
            "/meta.html",
            bytes: try Self.encoded(
                "<html><head><meta charset=\"iso-8859-1\"></head><body><p>Вторая \(russian).</p></body></html>",
                "WINDOWS-1251"
            ),
            type: "text/html; charset=windows-1251"
        )
        // A charset nobody knows is passed over: the page's bytes are read as before (UTF-8 here).
        try await site.put("/odd.txt", "Plain UTF-8: naïve façade.\n", type: "text/plain; charset=x-no-such-set")
        try WebSourceCLITests.pipeline(
            urls: ["ru.html", "fr.txt", "rows.csv", "meta.html", "odd.txt"].map { "\(base)/\($0)" }
        )
        .write(to: ws.file("http.yaml"), atomically: true, encoding: .utf8)
        let main = ws.target("main")
        let run = try await WebSourceCLITests.run(ws, main)
        #expect(run.exitCode == 0, "\(run)")
        let content = try await WebSourceCLITests.content(ws, main)
        func text(_ path: String) -> String {
            content.filter { $0.hasPrefix("\(host)/\(path) ") }.joined(separator: "\n")
        }
        #expect(text("ru.html").contains(russian), "\(content)")
        #expect(text("fr.txt").contains("Le café près de l'écluse."), "\(content)")
        #expect(text("rows.csv").contains("name: Écluse; place: Grenoble"), "\(content)")
        #expect(text("meta.html").contains("Вторая \(russian)"), "\(content)")
        #expect(text("odd.txt").contains("naïve façade"), "\(content)")
    }

    /// `text` in the character set `name`, through iconv (as a server would hold it).
    static func encoded(_ text: String, _ name: String) throws -> [UInt8] {
        let converter = iconv_open(name, "UTF-8")
        guard let converter, converter != iconv_t(bitPattern: -1) else { throw CocoaError(.featureUnsupported) }
        defer { iconv_close(converter) }
        var input = Array(text.utf8).map { CChar(bitPattern: $0) }
        var output = [CChar](repeating: 0, count: input.count * 2 + 16)
        let written: Int = input.withUnsafeMutableBufferPointer { inBuffer in
            output.withUnsafeMutableBufferPointer { outBuffer in
                var inPointer: UnsafeMutablePointer<CChar>? = inBuffer.baseAddress
                var inLeft = inBuffer.count
                var outPointer: UnsafeMutablePointer<CChar>? = outBuffer.baseAddress
                var outLeft = outBuffer.count
                let result = iconv(converter, &inPointer, &inLeft, &outPointer, &outLeft)
                return result == Int(bitPattern: UInt(bitPattern: -1)) || inLeft != 0 ? -1 : outBuffer.count - outLeft
            }
        }
        guard written >= 0 else { throw CocoaError(.fileWriteInapplicableStringEncoding) }
        return output.prefix(written).map { UInt8(bitPattern: $0) }
    }
}
