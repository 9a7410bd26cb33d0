/// Runs `count` writers at the same moment, each its own task, and returns the indices of those whose `write`
/// answered `true`, ascending: for insert-once stores, where exactly one of many racing writers must win.
/// - Throws: the first error a writer threw.
package func racingWriters(
    _ count: Int,
    _ write: @escaping @Sendable (_ writer: Int) async throws -> Bool
) async throws -> [Int] {
    try await withThrowingTaskGroup(of: (Int, Bool).self) { group in
        for writer in 0..<count {
            group.addTask { (writer, try await write(writer)) }
        }
        var winners: [Int] = []
        for try await (writer, won) in group where won { winners.append(writer) }
        return winners.sorted()
    }
}
