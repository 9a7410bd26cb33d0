/// The reservations of a ``RateBudgetStateMachine`` that an answer may still report on: from the oldest
/// request not yet settled to the newest.
///
/// An answer's `x-ratelimit-remaining-*` is the provider's level just after it admitted that request.
/// Replaying what was reserved after it (and counted: a request the provider refused or never saw is
/// not), with the refill in between, gives the provider's level now, in either direction: lower than
/// the client thought (another client, a restart against a drained bucket) or higher (requests that
/// failed before the provider counted them).
struct RateBudgetLedger: Sendable {
    struct Entry: Sendable, Equatable {
        var ticket: Int
        var time: Double
        var tokens: Double
        /// False once the provider is known not to have counted the request (a 429, a 5xx, a reset).
        var counted = true
        var settled = false
    }

    /// Ascending tickets; the first is not settled (or the ledger is empty).
    private(set) var entries: [Entry] = []
    private var nextTicket = 0
    /// Entries kept at most, should a ticket never be settled.
    static let maximumEntries = 4_096

    mutating func record(tokens: Double, now: Double) -> Int {
        let ticket = nextTicket
        nextTicket += 1
        entries.append(Entry(ticket: ticket, time: now, tokens: tokens))
        if entries.count > Self.maximumEntries { entries.removeFirst(entries.count - Self.maximumEntries) }
        return ticket
    }

    func entry(_ ticket: Int) -> Entry? { index(of: ticket).map { entries[$0] } }

    /// Marks `ticket` as answered or failed; `counted: false` says the provider did not count it.
    mutating func settle(_ ticket: Int, counted: Bool) {
        guard let index = index(of: ticket) else { return }
        entries[index].settled = true
        if !counted { entries[index].counted = false }
        let firstOpen = entries.firstIndex { !$0.settled } ?? entries.endIndex
        entries.removeFirst(firstOpen)
    }

    /// A bucket's level at `now`, given that it held `remaining` at `admitted` just after the provider
    /// took (or refused) `ticket`: the counted reservations made after `ticket` are taken out in order,
    /// the refill added between them, capped at `capacity`. `cost` is what an entry takes from this
    /// bucket (its tokens, or 1 request). Nil for a ticket no longer in the ledger.
    func replay(
        after ticket: Int,
        remaining: Double,
        admitted: Double,
        capacity: Double,
        ratePerSecond: Double,
        now: Double,
        cost: (Entry) -> Double
    ) -> Double? {
        guard let index = index(of: ticket) else { return nil }
        var level = remaining
        var stamp = admitted
        for entry in entries[(index + 1)...] where entry.counted {
            if entry.time > stamp {
                level = min(capacity, level + (entry.time - stamp) * ratePerSecond)
                stamp = entry.time
            }
            level -= cost(entry)
        }
        if now > stamp { level = min(capacity, level + (now - stamp) * ratePerSecond) }
        return level
    }

    private func index(of ticket: Int) -> Int? {
        guard let first = entries.first, ticket >= first.ticket else { return nil }
        let index = ticket - first.ticket
        return index < entries.count && entries[index].ticket == ticket ? index : nil
    }
}
