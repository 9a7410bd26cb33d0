import Foundation
import Hummingbird
import SluiceCore
import Testing

@testable import SluiceServe

/// The pure parts of the connection and method limits (issue 37, items 5 and 13).
@Suite struct ServeLimitsTests {
    @Test func theConnectionBudgetLeavesDescriptorsFree() {
        #expect(ConnectionBudget.connections(configured: 1024, limit: 1_048_576, open: 30) == 1024)
        #expect(
            ConnectionBudget.connections(configured: 1024, limit: 256, open: 30) == 256 - 30 - ConnectionBudget.reserve
        )
        #expect(ConnectionBudget.connections(configured: 1024, limit: 50, open: 30) == 1)
    }

    @Test func everyContractPathHasItsMethods() {
        #expect(ContractRoutes.methods(for: "/v1/search") == ["POST"])
        #expect(ContractRoutes.methods(for: "/v1/documents/a%2Fb.txt") == ["GET"])
        #expect(ContractRoutes.methods(for: "/v1/documents") == ["GET"])
        #expect(ContractRoutes.methods(for: "/v1/runs/1-1") == ["GET"])
        #expect(ContractRoutes.methods(for: "/v1/runs") == ["POST"])
        #expect(ContractRoutes.methods(for: "/v1/documents/") == [])
        #expect(ContractRoutes.methods(for: "/v1/nothing") == [])
        #expect(ContractRoutes.table.count >= 10)
    }

    @Test func messagesNameNoFolder() {
        let redaction = MessageRedaction([("/srv/sluice/state", "<state>"), ("/srv/sluice/state/index", "<store>")])
        #expect(
            redaction("cannot open /srv/sluice/state/index/data.mdb or /srv/sluice/state/run.lock")
                == "cannot open <store>/data.mdb or <state>/run.lock"
        )
    }

    @Test func everyConflictHasARunID() throws {
        let mismatch = APIError(SluiceError(.embedderMismatch, "the store holds another embedder's vectors"))
        #expect(mismatch.status == .conflict)
        let text = String(decoding: try JSONEncoder().encode(mismatch.body), as: UTF8.self)
        #expect(text.contains(#""run_id":null"#), "\(text)")
        let held = RunManager.lockHeld(runID: "1-1")
        #expect(String(decoding: try JSONEncoder().encode(held.body), as: UTF8.self).contains(#""run_id":"1-1""#))
    }

    @Test func requestBodiesAreJSON() {
        for type in ["application/json", "application/json; charset=utf-8", "Application/JSON"] {
            #expect(RequestBodyPolicyMiddleware<BasicRequestContext>.isJSON(type), "\(type)")
        }
        for type in ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data", "application/jsonx", ""]
        {
            #expect(!RequestBodyPolicyMiddleware<BasicRequestContext>.isJSON(type), "\(type)")
        }
    }
}
