import Foundation
import SluiceCore
import SluiceHTTP
import SluiceTesting
import Testing

@testable import SluiceSinks

/// What Pinecone's log sequence numbers give, as the stand-in enforces them (docs/GENERATIONS.md, "Pinecone:
/// what its LSNs give, and why a sharded deployment is still refused"): every write to a namespace answers the
/// next LSN of that namespace; a query answers the highest LSN it reflects and reflects every write up to it;
/// an unindexed write is seen by no read. On that, a claim that is alone at its writer's barrier is won by at
/// most one claimant, but no reader can tell a won claim from a lost one.
@Suite struct PineconeFreshnessTests {
    /// One namespace of the stand-in's index `i` (dimension 2), spoken to as Pinecone's REST API.
    struct Namespace {
        let server: StandInServer
        let name: String

        static func make(_ server: StandInServer, _ name: String) -> Namespace {
            Namespace(server: server, name: name)
        }

        /// The stand-in at `path`, with Pinecone's key and version headers (`keyed`) or without (its own
        /// `/_standin/…` routes).
        static func client(_ server: StandInServer, _ path: String = "", keyed: Bool = true) -> StoreHTTP {
            StoreHTTP(
                baseURL: server.baseURL + path,
                headers: keyed ? [("Api-Key", "p-key"), ("X-Pinecone-Api-Version", "2025-04")] : [],
                maxRetries: 0,
                timeout: .seconds(30),
                label: "pinecone"
            )
        }

        /// The data plane of the index `i`.
        var data: StoreHTTP { Self.client(server, "/index/i") }

        static func createIndex(_ server: StandInServer) async throws {
            let body = #"{"name":"i","dimension":2,"metric":"cosine","spec":{"serverless":{}}}"#
            try await client(server).send("POST", "/indexes", json: Array(body.utf8))
        }

        /// Sets the stand-in's indexing lag (a large one holds indexing; 0 indexes everything pending).
        static func setLag(_ server: StandInServer, _ lag: Int) async throws {
            let body = #"{"lag":\#(lag)}"#
            try await client(server, keyed: false).send("POST", "/_standin/indexing", json: Array(body.utf8))
        }

        /// Indexes the next `writes` pending writes of this namespace.
        func advance(_ writes: Int) async throws {
            let body = #"{"advance":{"index":"i","namespace":"\#(name)","writes":\#(writes)}}"#
            try await Self.client(server, keyed: false).send("POST", "/_standin/indexing", json: Array(body.utf8))
        }

        /// Upserts one record; returns the write's LSN (`x-pinecone-request-lsn`).
        func upsert(_ id: String, version: Int) async throws -> Int {
            let body =
                #"{"namespace":"\#(name)","vectors":[{"id":"\#(id)","values":[1,0],"metadata":{"version":\#(version)}}]}"#
            let response = try await data.send("POST", "/vectors/upsert", json: Array(body.utf8))
            return try #require(response.header("x-pinecone-request-lsn").flatMap { Int($0) }, "\(response.headers)")
        }

        /// Deletes records; returns the write's LSN.
        func delete(_ ids: [String]) async throws -> Int {
            let list = ids.map { "\"\($0)\"" }.joined(separator: ",")
            let body = #"{"namespace":"\#(name)","ids":[\#(list)]}"#
            let response = try await data.send("POST", "/vectors/delete", json: Array(body.utf8))
            return try #require(response.header("x-pinecone-request-lsn").flatMap { Int($0) }, "\(response.headers)")
        }

        /// The ids a query finds (every record of `version`, or every record), sorted, and the query's
        /// `x-pinecone-max-indexed-lsn`.
        func query(version: Int? = nil) async throws -> (ids: [String], maxIndexed: Int) {
            let filter = version.map { #","filter":{"version":{"$eq":\#($0)}}"# } ?? ""
            let body = #"{"namespace":"\#(name)","vector":[1,0],"topK":100\#(filter)}"#
            let response = try await data.send("POST", "/query", json: Array(body.utf8))
            let object = try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
            let matches = (object["matches"] as? [[String: Any]]) ?? []
            let maxIndexed = try #require(response.header("x-pinecone-max-indexed-lsn").flatMap { Int($0) })
            return (matches.compactMap { $0["id"] as? String }.sorted(), maxIndexed)
        }

        /// The ids a fetch of `ids` finds, sorted.
        func fetch(_ ids: [String]) async throws -> [String] {
            let query = ids.map { "ids=\($0)" }.joined(separator: "&")
            let response = try await data.send("GET", "/vectors/fetch?namespace=\(name)&\(query)")
            #expect(response.header("x-pinecone-max-indexed-lsn") == nil, "a fetch answers no LSN: none is documented")
            let object = try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
            return ((object["vectors"] as? [String: Any]) ?? [:]).keys.sorted()
        }

        /// The ids a list finds, sorted.
        func list() async throws -> [String] {
            let response = try await data.send("GET", "/vectors/list?namespace=\(name)")
            let object = try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
            return ((object["vectors"] as? [[String: Any]]) ?? []).compactMap { $0["id"] as? String }.sorted()
        }
    }

    static func server() async throws -> StandInServer {
        let server = try await StandInServer.launch(script: "pinecone_standin.py", arguments: ["--api-key", "p-key"])
        try await Namespace.createIndex(server)
        return server
    }

    @Test("every write answers the next LSN of its namespace; a query answers the highest it reflects")
    func lsnPerNamespace() async throws {
        let server = try await Self.server()
        defer { server.stop() }
        let a = Namespace.make(server, "a")
        let b = Namespace.make(server, "b")
        #expect(try await a.upsert("x", version: 1) == 1)
        #expect(try await a.upsert("y", version: 1) == 2)
        #expect(try await b.upsert("x", version: 1) == 1, "writes to one namespace do not move another's LSN")
        #expect(try await a.delete(["x"]) == 3, "a delete is a write too")
        #expect(try await a.query() == (["y"], 3))
        #expect(try await b.query() == (["x"], 1))
    }

    @Test("a write not yet indexed is seen by no read; the max indexed LSN moves only as writes are indexed")
    func laggingIndex() async throws {
        let server = try await Self.server()
        defer { server.stop() }
        let ns = Namespace.make(server, "lag")
        try await Namespace.setLag(server, 1_000)
        #expect(try await ns.upsert("x", version: 1) == 1)
        #expect(try await ns.query() == ([], 0))
        #expect(try await ns.fetch(["x"]) == [], "a fetch does not see an unindexed write either")
        #expect(try await ns.list() == [])
        #expect(try await ns.upsert("y", version: 1) == 2)
        try await ns.advance(1)
        #expect(try await ns.query() == (["x"], 1), "the query reflects every write up to its LSN, and no later one")
        #expect(try await ns.fetch(["x", "y"]) == ["x"])
        try await Namespace.setLag(server, 0)
        #expect(try await ns.query() == (["x", "y"], 2))
        #expect(try await ns.list() == ["x", "y"])
    }

    /// The steps of two claimants, A and B: each writes its claim, then reads the claims of the version.
    enum Step: String, CaseIterable, Sendable {
        case writeA, writeB, readA, readB
    }

    /// Every order of the four steps in which each claimant writes before it reads.
    static let schedules: [[Step]] = {
        func orders(_ left: [Step]) -> [[Step]] {
            left.isEmpty ? [[]] : left.flatMap { step in orders(left.filter { $0 != step }).map { [step] + $0 } }
        }
        return orders(Step.allCases).filter { order in
            order.firstIndex(of: .writeA)! < order.firstIndex(of: .readA)!
                && order.firstIndex(of: .writeB)! < order.firstIndex(of: .readB)!
        }
    }()

    /// Runs `schedule` in a namespace of its own, indexing held: a claimant wins when it reads no other claim
    /// of the version. With `barrier`, a claimant reads again (the stand-in indexing one more write
    /// in between, as time would) until the query's max indexed LSN reaches its claim's LSN; without, it reads
    /// once. Returns the winners.
    static func race(
        _ server: StandInServer,
        _ name: String,
        _ schedule: [Step],
        barrier: Bool
    ) async throws -> Set<String> {
        let ns = Namespace.make(server, name)
        try await Namespace.setLag(server, 1_000)
        var lsn: [String: Int] = [:]
        var winners: Set<String> = []
        for step in schedule {
            let claimant = step == .writeA || step == .readA ? "claim-a" : "claim-b"
            switch step {
            case .writeA, .writeB:
                lsn[claimant] = try await ns.upsert(claimant, version: 7)
            case .readA, .readB:
                var seen = try await ns.query(version: 7)
                while barrier, seen.maxIndexed < lsn[claimant]! {
                    try await ns.advance(1)
                    seen = try await ns.query(version: 7)
                }
                if seen.ids.allSatisfy({ $0 == claimant }) { winners.insert(claimant) }
            }
        }
        return winners
    }

    @Test("claims alone at their barrier: at most one claimant wins in every order; without the barrier both can")
    func claimRace() async throws {
        let server = try await Self.server()
        defer { server.stop() }
        #expect(Self.schedules.count == 6)
        var bothWonWithout: [[Step]] = []
        for (number, schedule) in Self.schedules.enumerated() {
            let winners = try await Self.race(server, "barrier-\(number)", schedule, barrier: true)
            #expect(winners.count <= 1, "\(schedule.map(\.rawValue)): \(winners.sorted())")
            let unguarded = try await Self.race(server, "none-\(number)", schedule, barrier: false)
            if unguarded.count == 2 { bothWonWithout.append(schedule) }
        }
        // Without the barrier, a claimant that reads before its own claim is indexed sees no other claim either.
        #expect(bothWonWithout.contains([.writeA, .writeB, .readA, .readB]), "\(bothWonWithout)")
    }

    @Test("a reader cannot tell a won claim from two lost ones: both races leave the same records")
    func readersCannotTellTheWinner() async throws {
        let server = try await Self.server()
        defer { server.stop() }
        let won = try await Self.race(server, "won", [.writeA, .readA, .writeB, .readB], barrier: true)
        let lost = try await Self.race(server, "lost", [.writeA, .writeB, .readB, .readA], barrier: true)
        #expect(won == ["claim-a"])
        #expect(lost.isEmpty)
        try await Namespace.setLag(server, 0)
        let first = Namespace.make(server, "won")
        let second = Namespace.make(server, "lost")
        // Everything a reader can ask: the claims a query finds at the same max indexed LSN, a fetch, a list.
        #expect(try await first.query(version: 7) == second.query(version: 7))
        #expect(try await first.fetch(["claim-a", "claim-b"]) == second.fetch(["claim-a", "claim-b"]))
        #expect(try await first.list() == second.list())
    }
}
