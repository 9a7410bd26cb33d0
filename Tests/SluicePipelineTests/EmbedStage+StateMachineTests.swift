import Foundation
import SluiceCore
import Testing

@testable import SluicePipeline

/// ``EmbedStageStateMachine``: deduplication against the cache and against chunks in flight, and the
/// request permits, without tasks or I/O.
@Suite struct EmbedStageStateMachineTests {
    typealias Machine = EmbedStageStateMachine<String>

    /// A pending document whose chunks have these texts.
    static func document(_ key: String, _ texts: [String]) -> DocumentWork {
        let file = SourceFile(key: key, url: URL(fileURLWithPath: "/nowhere/\(key)"), size: 1, mtimeNanoseconds: 0)
        var document = DocumentWork(file: file, previous: nil)
        document.chunks = texts.enumerated().map { ordinal, text in
            let chunk = Chunk(ordinal: ordinal, text: text, tokenCount: 2)
            return PreparedChunk(
                chunk: chunk,
                hash: chunk.hash,
                id: VectorID(documentKey: key, ordinal: ordinal, chunkHash: chunk.hash),
                vector: nil
            )
        }
        return document
    }

    static func hash(_ text: String) -> ContentHash { Chunk(ordinal: 0, text: text, tokenCount: 1).hash }

    static func texts(_ admission: Machine.Admission) -> [String]? {
        guard case .embed(let texts) = admission.action else { return nil }
        return texts.map(\.text)
    }

    // MARK: The cache

    @Test func aDocumentWhoseChunksAreAllCachedGoesOnAtOnceWithTheirVectors() {
        var machine = Machine(parallelism: 1)
        let document = Self.document("a", ["one", "two"])
        #expect(machine.hashesToLookUp(document) == [Self.hash("one"), Self.hash("two")])
        let admission = machine.admit(document, cached: [Self.hash("one"): [1, 0], Self.hash("two"): [0, 1]])
        guard case .forward(let ready) = admission.action else {
            Issue.record("expected the document to go on")
            return
        }
        #expect(admission.cacheHits == 2)
        #expect(ready.chunks.map(\.vector) == [[1, 0], [0, 1]])
        #expect(machine.waitingDocuments == 0)
    }

    @Test func onlyTheChunksTheCacheLacksAreEmbedded() {
        var machine = Machine(parallelism: 1)
        let admission = machine.admit(Self.document("a", ["one", "two"]), cached: [Self.hash("one"): [1, 0]])
        #expect(admission.cacheHits == 1)
        #expect(Self.texts(admission) == ["two"])
        #expect(machine.waitingDocuments == 1)
        let completion = machine.complete([Self.hash("two")], [.success([0, 1])])
        #expect(completion.ready.count == 1)
        #expect(completion.ready.first?.chunks.map(\.vector) == [[1, 0], [0, 1]])
        #expect(machine.waitingDocuments == 0)
    }

    @Test func aCachedVectorThatIsNotFiniteIsEmbeddedAgain() {
        var machine = Machine(parallelism: 1)
        let admission = machine.admit(Self.document("a", ["one"]), cached: [Self.hash("one"): [.nan, 1]])
        #expect(admission.cacheHits == 0)
        #expect(Self.texts(admission) == ["one"])
    }

    // MARK: Identical chunks in flight

    @Test func anIdenticalChunkInFlightWaitsForTheFirstAndGetsItsVector() {
        var machine = Machine(parallelism: 1)
        let first = machine.admit(Self.document("a", ["same", "own"]), cached: [:])
        #expect(Self.texts(first) == ["same", "own"])
        // The second document's "same" is in flight: not looked up, not embedded again.
        let second = Self.document("b", ["same"])
        #expect(machine.hashesToLookUp(second).isEmpty)
        #expect(Self.texts(machine.admit(second, cached: [:])) == [])
        #expect(machine.waitingDocuments == 2)

        let completion = machine.complete([Self.hash("same")], [.success([0.5, 0.5])])
        #expect(completion.ready.map(\.file.key) == ["b"], "a still waits for its other chunk")
        #expect(completion.ready.first?.chunks.first?.vector == [0.5, 0.5])
        let rest = machine.complete([Self.hash("own")], [.success([1, 0])])
        #expect(rest.ready.map(\.file.key) == ["a"])
        #expect(rest.ready.first?.chunks.map(\.vector) == [[0.5, 0.5], [1, 0]])
        // Once completed the hash is no longer in flight: a later identical chunk is looked up in the cache.
        #expect(machine.hashesToLookUp(Self.document("c", ["same"])) == [Self.hash("same")])
    }

    @Test func identicalChunksWithinOneDocumentAreEmbeddedOnce() {
        var machine = Machine(parallelism: 1)
        #expect(Self.texts(machine.admit(Self.document("a", ["x", "x", "y"]), cached: [:])) == ["x", "y"])
        _ = machine.complete([Self.hash("y")], [.success([0, 1])])
        let completion = machine.complete([Self.hash("x")], [.success([1, 0])])
        #expect(completion.ready.first?.chunks.map(\.vector) == [[1, 0], [1, 0], [0, 1]])
    }

    @Test func whenTheFirstFailsEveryDocumentWaitingForThatTextFailsWithItsReason() {
        var machine = Machine(parallelism: 1)
        _ = machine.admit(Self.document("a", ["same"]), cached: [:])
        _ = machine.admit(Self.document("b", ["same", "other"]), cached: [:])
        let failure = SluiceError(.embeddingFailed, "the batch failed")
        let completion = machine.complete([Self.hash("same")], [.failure(failure)])
        #expect(completion.ready.map(\.file.key) == ["a"], "b still waits for its other chunk")
        guard case .failed(let error) = completion.ready.first?.outcome else {
            Issue.record("expected a failed document")
            return
        }
        #expect(error.message == "the batch failed")
        // b fails too once its last chunk is settled, even though that one succeeded.
        let rest = machine.complete([Self.hash("other")], [.success([1])])
        guard case .failed(let other) = rest.ready.first?.outcome else {
            Issue.record("expected b to fail")
            return
        }
        #expect(other.message == "the batch failed")
        #expect(rest.ready.first?.chunks.isEmpty == true, "a failed document carries no chunks on")
        // Nothing was cached for the failed text: the next run (or document) embeds it again.
        #expect(machine.hashesToLookUp(Self.document("c", ["same"])) == [Self.hash("same")])
    }

    @Test func aRefusalOfTheProviderIsReportedOnce() {
        var machine = Machine(parallelism: 2)
        _ = machine.admit(Self.document("a", ["one"]), cached: [:])
        _ = machine.admit(Self.document("b", ["two"]), cached: [:])
        let refused = SluiceError(.providerRefused, "quota exhausted")
        #expect(machine.complete([Self.hash("one")], [.failure(refused)]).refusal?.message == "quota exhausted")
        #expect(machine.complete([Self.hash("two")], [.failure(refused)]).refusal == nil)
    }

    @Test func theMachineIsFinishedOnceTheInputEndedAndNoDocumentWaits() {
        var machine = Machine(parallelism: 1)
        _ = machine.admit(Self.document("a", ["one"]), cached: [:])
        machine.inputFinished()
        #expect(!machine.isFinished)
        _ = machine.complete([Self.hash("one")], [.success([1])])
        #expect(machine.isFinished)
    }

    // MARK: Permits

    @Test func permitsBeyondTheParallelismWaitAndPassOnInOrder() {
        var machine = Machine(parallelism: 2)
        guard case .proceed = machine.acquirePermit("b1"), case .proceed = machine.acquirePermit("b2") else {
            Issue.record("two permits are free")
            return
        }
        guard case .suspend = machine.acquirePermit("b3"), case .suspend = machine.acquirePermit("b4") else {
            Issue.record("the third and fourth wait")
            return
        }
        #expect(machine.permitsInUse == 2)
        #expect(machine.releasePermit() == "b3")
        #expect(machine.releasePermit() == "b4")
        #expect(machine.permitsInUse == 2, "passed on, not returned")
        #expect(machine.releasePermit() == nil)
        #expect(machine.releasePermit() == nil)
        #expect(machine.permitsInUse == 0)
    }

    /// Every batch, whatever its outcome, gives its permit back: the stage releases once per completion.
    @Test(arguments: [true, false])
    func permitsAreReturnedWhetherTheBatchSucceedsOrFails(succeeds: Bool) {
        var machine = Machine(parallelism: 1)
        for round in 0..<3 {
            let text = "text \(round)"
            _ = machine.admit(Self.document("d\(round)", [text]), cached: [:])
            guard case .proceed = machine.acquirePermit("batch \(round)") else {
                Issue.record("the permit of the previous batch was not returned")
                return
            }
            let result: Result<[Float], SluiceError> =
                succeeds ? .success([1]) : .failure(SluiceError(.embeddingFailed, "no"))
            #expect(machine.complete([Self.hash(text)], [result]).ready.count == 1)
            #expect(machine.releasePermit() == nil)
        }
        #expect(machine.permitsInUse == 0)
        #expect(machine.waitingDocuments == 0)
    }
}
