import SluiceCore
import Testing

@testable import SluicePipeline

@Suite struct ExtractionSharingTests {
    private func key(_ text: String) -> ExtractionSharing.Key {
        .init(content: ContentHash(utf8: text), extractor: "text")
    }

    private func text(_ s: String) -> ExtractedText { ExtractedText(sections: [TextSection(text: s)]) }

    private func isExtract(_ claim: ExtractionSharing.Claim) -> Bool {
        if case .extract = claim { return true }
        return false
    }

    @Test func aWaiterGetsTheTextOrExtractsAloneWhenTheSharedAttemptFailed() async throws {
        let sharing = ExtractionSharing(budgetBytes: 1 << 20)
        let good = key("good")
        let bad = key("bad")

        #expect(isExtract(await sharing.claim(good)))
        let waiter = Task { await sharing.claim(good) }
        while await sharing.waiting(for: good) == 0 { try await Task.sleep(for: .milliseconds(1)) }
        await sharing.finish(good, with: text("the text"))
        guard case .shared(let shared) = await waiter.value else {
            Issue.record("the waiter did not get the text")
            return
        }
        #expect(shared == text("the text"))
        guard case .shared = await sharing.claim(good) else {
            Issue.record("a later copy did not get the held text")
            return
        }

        #expect(isExtract(await sharing.claim(bad)))
        let failedWaiter = Task { await sharing.claim(bad) }
        while await sharing.waiting(for: bad) == 0 { try await Task.sleep(for: .milliseconds(1)) }
        await sharing.finish(bad, with: nil)
        guard case .extractAlone = await failedWaiter.value else {
            Issue.record("the waiter should extract on its own")
            return
        }
        // Nothing is held for a failure: the next copy tries again (and is waited for again).
        #expect(isExtract(await sharing.claim(bad)))
    }

    @Test func finishedTextsAreHeldWithinTheBudgetOldestOut() async {
        let sharing = ExtractionSharing(budgetBytes: 10)
        let first = key("1")
        let second = key("2")
        let huge = key("3")
        _ = await sharing.claim(first)
        await sharing.finish(first, with: text("123456"))
        _ = await sharing.claim(second)
        await sharing.finish(second, with: text("abcdef"))  // 12 bytes held > 10: the first goes
        #expect(isExtract(await sharing.claim(first)))
        guard case .shared = await sharing.claim(second) else {
            Issue.record("the newest text should be held")
            return
        }
        _ = await sharing.claim(huge)
        await sharing.finish(huge, with: text(String(repeating: "x", count: 11)))  // over the budget alone
        #expect(isExtract(await sharing.claim(huge)))
    }
}
