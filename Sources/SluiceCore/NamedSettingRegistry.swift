import Synchronization

/// The members of an open kind a pipeline file may name (`embed.provider`, `answer.provider`): the built-in
/// ones, then those a library user registers, in the order they were added. A member registered under a
/// name already known replaces it.
package final class NamedSettingRegistry<Member: NamedSetting & Equatable & Sendable>: Sendable {
    private let members: Mutex<[Member]>

    package init(_ members: [Member]) { self.members = Mutex(members) }

    /// Every member, in the order added.
    package var all: [Member] { members.withLock { $0 } }

    /// The member called `name`.
    package func named(_ name: String) -> Member? { all.first { $0.rawValue == name } }

    /// Adds `member`, or replaces the member of the same name.
    package func register(_ member: Member) {
        members.withLock { members in
            if let index = members.firstIndex(of: member) {
                members[index] = member
            } else {
                members.append(member)
            }
        }
    }
}
