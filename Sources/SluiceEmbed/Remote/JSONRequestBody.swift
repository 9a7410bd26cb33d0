import SluiceCore

/// A request body of the remote embedders, written straight to JSON bytes: an object of a few fields whose
/// values are strings, lists of strings, integers or booleans.
///
/// The body of a batch is mostly its texts (about 60 KB for 64 chunks of 256 tokens), so escaping them is
/// the work (``JSONString``). Before, `JSONSerialization` took 13% of the CPU of a latency-bound `sluice run`
/// (issue 19), as much as the chunker.
struct JSONRequestBody {
    enum Value {
        case string(String)
        case strings([String])
        case int(Int)
        case bool(Bool)
    }

    private(set) var bytes: [UInt8] = [UInt8(ascii: "{")]

    init() {}

    /// Appends `"key": value`.
    mutating func append(_ key: String, _ value: Value) {
        if bytes.count > 1 { bytes.append(UInt8(ascii: ",")) }
        appendString(key)
        bytes.append(UInt8(ascii: ":"))
        switch value {
        case .string(let text): appendString(text)
        case .strings(let texts):
            bytes.reserveCapacity(bytes.count + texts.reduce(2) { $0 + $1.utf8.count + 3 })
            bytes.append(UInt8(ascii: "["))
            for (index, text) in texts.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                appendString(text)
            }
            bytes.append(UInt8(ascii: "]"))
        case .int(let number): bytes.append(contentsOf: String(number).utf8)
        case .bool(let flag): bytes.append(contentsOf: (flag ? "true" : "false").utf8)
        }
    }

    /// The finished object.
    var body: [UInt8] { bytes + [UInt8(ascii: "}")] }

    private mutating func appendString(_ text: String) { JSONString.append(text, to: &bytes) }
}
