import Foundation
import SluiceClient
import SluiceCore
import SluiceTesting
import Testing

/// What session 47's campaign found leaking past access control, each fixed and checked here (the scripts
/// of the campaign showed each before the fix): front matter that names readers but cannot be read whole
/// made a document everyone's; a keys file mounted as Kubernetes mounts a Secret was never read again; a
/// hidden document spelled as a readable one's twin (NFD against NFC) was listed; `/ready` counted hidden
/// documents for anyone; filters on the readers gave back the names results leave out.
@Suite(.serialized)
struct ServeAccessHostileCLITests {
    typealias Access = ServeAccessCLITests

    @Test("front matter whose readers cannot be read fails the document instead of making it everyone's")
    func unreadableReadersFailClosed() async throws {
        let ws = try Workspace("serve-access-front-matter")
        defer { ws.cleanUp() }
        let target = try Access.corpus(ws)
        let minutes = [
            "m1.md": "---\naccess: [board, 2024]\n---\n",  // a number in the list: dropped whole before
            "m2.md": "---\naccess: [board]\ntitle: Q3: plan: final\n---\n",  // YAML that does not parse
            "m3.md": "---\naccess: [board]\ntags: [a]\ntags: [b]\n---\n",  // a key written twice
            "m4.md": "\n---\naccess: [board]\n---\n",  // after a blank line
            "m5.md": "---  \naccess: [board]\n---\t\n",  // spaces after the dashes: read as front matter
        ]
        for (name, head) in minutes {
            try Corpus.write(
                head + "Board minute: the quokka merger closes on Friday.\n",
                to: ws.corpus.appendingPathComponent("secret/\(name)")
            )
        }
        try await ws.run(target, expecting: 2)
        let server = try await Access.serve(ws, target)
        for mode in ["vector", "keyword", "hybrid"] {
            let seen = try await server.client(token: Access.engKey)
                .search(SearchRequest(query: "quokka merger board minute", k: 20, mode: mode)).results
            #expect(!seen.contains { $0.documentKey.hasPrefix("secret/") }, "\(mode): \(seen.map(\.documentKey))")
        }
        let board = try await server.client(token: Access.operatorToken)
            .search(SearchRequest(query: "quokka merger board minute", k: 20, mode: "keyword")).results
        #expect(Set(board.map(\.documentKey)).intersection(minutes.keys.map { "secret/\($0)" }) == ["secret/m5.md"])
        _ = try await server.stop()
        let status = try await ws.sluice(["status", ws.pipeline.path] + target.arguments)
        #expect(status.stdout.contains("not a text or a list of texts"), "\(status)")
        #expect(status.stdout.contains("front matter that cannot be read"), "\(status)")
        #expect(status.stdout.contains("front matter after blank lines"), "\(status)")
    }

    @Test("the document listing compares keys as bytes: a hidden NFD twin of a readable NFC key is not listed")
    func unicodeTwinIsNotListed() async throws {
        let ws = try Workspace("serve-access-twin")
        defer { ws.cleanUp() }
        let target = try Access.corpus(ws)
        let nfc = "notes/caf\u{E9}.md"
        let nfd = "notes/cafe\u{301}.md"
        try Corpus.write(
            "---\naccess: [eng]\n---\nThe café menu for engineers.\n",
            to: ws.corpus.appendingPathComponent(nfc)
        )
        try Corpus.write(
            "---\naccess: [board]\n---\nThe board's café budget.\n",
            to: ws.corpus.appendingPathComponent(nfd)
        )
        try await ws.run(target, expecting: 0)
        let server = try await Access.serve(ws, target)
        var listed: [[UInt8]] = []
        var cursor: String?
        repeat {
            let page = try await server.client(token: Access.engKey).documents(cursor: cursor, limit: 2)
            listed += page.documents.map { Array($0.key.utf8) }
            cursor = page.nextCursor
        } while cursor != nil
        #expect(listed.contains(Array(nfc.utf8)))
        #expect(!listed.contains(Array(nfd.utf8)), "the board's twin is listed to the eng key")
        // The operator's export, a record a page: both spellings, neither skipped at a page's seam.
        var exported: [[UInt8]] = []
        var after: String?
        repeat {
            let page = try await server.client(token: Access.operatorToken).export(cursor: after, limit: 1)
            exported += page.records.map { Array($0.documentKey.utf8) }
            after = page.nextCursor
        } while after != nil
        #expect(exported.contains(Array(nfc.utf8)) && exported.contains(Array(nfd.utf8)))
        _ = try await server.stop()
    }

    @Test("/ready without the token leaves the counts out under access control; a filter on the readers is refused")
    func countsAndReadersStayHidden() async throws {
        let ws = try Workspace("serve-access-ready")
        defer { ws.cleanUp() }
        let target = try Access.corpus(ws)
        try await ws.run(target, expecting: 0)
        let server = try await Access.serve(ws, target)
        func object(_ data: Data) throws -> [String: Any] {
            try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        }
        let open = try object(try await server.exchange("GET", "/ready").body)
        #expect(open["documents"] == nil && open["vectors"] == nil && open["last_run"] == nil, "\(open)")
        let detailed = try object(
            try await server.exchange("GET", "/ready", headers: ["Authorization": "Bearer \(Access.operatorToken)"])
                .body
        )
        #expect(detailed["documents"] as? Int == 26, "\(detailed)")
        let auth = ["Authorization": "Bearer \(Access.engKey)"]
        for filter in [
            #"{"access": "board"}"#, #"{"access": {"$prefix": "bo"}}"#,
            #"{"$or": [{"access": "hr"}, {"format": "markdown"}]}"#,
        ] {
            let body = Data(#"{"query": "salary", "k": 3, "filter": \#(filter)}"#.utf8)
            let answer = try await server.exchange("POST", "/v1/search", body: body, headers: auth)
            #expect(answer.status == 400, "\(filter): \(String(decoding: answer.body, as: UTF8.self))")
        }
        let operatorFilter = Data(#"{"query": "salary", "k": 3, "filter": {"access": "board"}}"#.utf8)
        let operatorAnswer = try await server.exchange(
            "POST",
            "/v1/search",
            body: operatorFilter,
            headers: ["Authorization": "Bearer \(Access.operatorToken)"]
        )
        #expect(operatorAnswer.status == 200)
        _ = try await server.stop()
    }

    @Test(
        "a keys file mounted as Kubernetes mounts a Secret (a link through ..data) is read again when ..data is swapped"
    )
    func keysFileBehindSwappedLinks() async throws {
        let ws = try Workspace("serve-access-secret-mount")
        defer { ws.cleanUp() }
        let target = try Access.corpus(ws)
        try await ws.run(target, expecting: 0)
        let mount = ws.file("secret")
        let manager = FileManager.default
        try manager.createDirectory(at: mount.appendingPathComponent("..v1"), withIntermediateDirectories: true)
        try manager.moveItem(at: ws.file("keys.yaml"), to: mount.appendingPathComponent("..v1/keys.yaml"))
        try manager.createSymbolicLink(atPath: mount.appendingPathComponent("..data").path, withDestinationPath: "..v1")
        try manager.createSymbolicLink(
            atPath: mount.appendingPathComponent("keys.yaml").path,
            withDestinationPath: "..data/keys.yaml"
        )
        let server = try await ServeProcess.start(
            ws,
            target,
            [
                "--set", "serve.keys_file=\(mount.appendingPathComponent("keys.yaml").path)",
                "--set", "serve.api_key_env=SLUICE_TEST_TOKEN",
            ],
            environment: ["SLUICE_TEST_TOKEN": Access.operatorToken]
        )
        let query = Data(#"{"query": "salary", "k": 3}"#.utf8)
        let auth = ["Authorization": "Bearer \(Access.engKey)"]
        #expect(try await server.exchange("POST", "/v1/search", body: query, headers: auth).status == 200)
        // The kubelet's update: a new folder, a new link, renamed over ..data.
        try manager.createDirectory(at: mount.appendingPathComponent("..v2"), withIntermediateDirectories: true)
        try Access.keysFile([("hr-app", Access.hrDigest, "hana", "hr", "search")])
            .write(to: mount.appendingPathComponent("..v2/keys.yaml"), atomically: true, encoding: .utf8)
        try manager.createSymbolicLink(atPath: mount.appendingPathComponent("..tmp").path, withDestinationPath: "..v2")
        #expect(rename(mount.appendingPathComponent("..tmp").path, mount.appendingPathComponent("..data").path) == 0)
        // No SIGHUP: the watch must see the change. Bounded only against a hang.
        let deadline = ContinuousClock.now + .seconds(60)
        var status = 200
        while status != 401 && ContinuousClock.now < deadline {
            status = try await server.exchange("POST", "/v1/search", body: query, headers: auth).status
            if status != 401 { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(status == 401, "the removed key still works after the Secret's update")
        _ = try await server.stop()
    }
}
