import Foundation

/// The folders of this machine as error messages sent to API clients name them: the state folder, the
/// store's and the source's absolute paths replaced by what they are (`<state>`), so no answer shows the
/// server's layout (docs/SERVE.md, "Errors"). The server's log keeps the full message.
struct MessageRedaction: Sendable {
    /// Absolute paths and their labels, longest first (a store inside the state folder is named as the store).
    let replacements: [(path: String, label: String)]

    init(_ folders: [(path: String, label: String)]) {
        replacements = folders.filter { $0.path.count > 1 }.sorted { $0.path.count > $1.path.count }
    }

    func callAsFunction(_ message: String) -> String {
        var text = message
        for (path, label) in replacements { text = text.replacingOccurrences(of: path, with: label) }
        return text
    }
}
