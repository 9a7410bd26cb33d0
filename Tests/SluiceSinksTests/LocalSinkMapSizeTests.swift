import Foundation
import Testing

@testable import SluiceSinks

/// The local store's default map reserves address space, not memory, for every store open in the process:
/// 130 stores open at once must fit a process's 128 TB of it (with 1 TB maps they did not: the suite's
/// `Cannot allocate memory` of 2026-11-30, docs/STORES.md "The local store").
@Suite struct LocalSinkMapSizeTests {
    @Test func manyStoresOpenAtOnceFitTheAddressSpace() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent(
            "local-map-\(UInt64.random(in: 0...UInt64.max))"
        )
        defer { try? FileManager.default.removeItem(at: root) }
        var open: [LocalSink] = []
        for index in 0..<130 {
            open.append(try LocalSink(directory: root.appendingPathComponent("store-\(index)")))
        }
        #expect(open.count == 130)
    }
}
