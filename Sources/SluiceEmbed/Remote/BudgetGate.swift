import SluiceCore
import SluiceHTTP

/// The ``RemoteCallGate`` of the clients that share a rate budget and an adaptive concurrency limit (the
/// remote embedders, the reranker, the image captioner): an attempt takes a slot first, then the budget
/// (a ticket's time is when its request leaves, which is what the budget replays the provider's
/// `x-ratelimit-*` headers from); a rate limit pauses the budget as a whole and halves the concurrency.
struct BudgetGate: RemoteCallGate {
    let budget: RateBudget<ContinuousClock>
    let concurrency: AdaptiveConcurrency

    func admit(cost: Int) async throws -> RateBudgetStateMachine.Ticket {
        await concurrency.acquire()
        do {
            return try await budget.acquire(tokens: cost)
        } catch {
            concurrency.release(.neutral)
            throw error
        }
    }

    func release(_ permit: RateBudgetStateMachine.Ticket, _ release: RemoteCallRelease) {
        switch release {
        case .answered(let headers, let counted, let load):
            budget.answered(permit, headers: Self.snapshot(headers), counted: counted)
            concurrency.release(Self.outcome(load))
        case .rateLimited(let headers, let pause):
            budget.rateLimited(permit, headers: Self.snapshot(headers), pause: pause)
            concurrency.release(.overloaded)
        case .unanswered(let counted, let load):
            budget.failed(permit, counted: counted)
            concurrency.release(Self.outcome(load))
        }
    }

    private static func snapshot(_ headers: [String: String]) -> RateLimitSnapshot {
        RateLimitSnapshot(HTTPResponse(status: 0, headers: headers, body: []))
    }

    private static func outcome(_ load: RemoteCallLoad) -> AdaptiveConcurrencyStateMachine.Outcome {
        switch load {
        case .success: .success
        case .neutral: .neutral
        case .overloaded: .overloaded
        }
    }
}
