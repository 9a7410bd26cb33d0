import Foundation
import SluiceTesting

extension StandInServer {
    /// The JSON object the stand-in answers at `path` (`/_standin/stats`, `/_standin/files`); empty when
    /// the answer is not an object. python3 (a set-up dependency) fetches it: Foundation's URL loading on
    /// Linux needs FoundationNetworking, and these callers are synchronous.
    func jsonObject(_ path: String) throws -> [String: Any] {
        let data = try ChildOutput.run(
            "/usr/bin/env",
            [
                "python3", "-c",
                "import sys,urllib.request;sys.stdout.buffer.write(urllib.request.urlopen(sys.argv[1]).read())",
                baseURL + path,
            ]
        ).output
        return try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
    }

    /// The stand-in's request counters (`GET /_standin/stats`): its numbers, by name.
    func standInStats() throws -> [String: Int] {
        try jsonObject("/_standin/stats").compactMapValues { ($0 as? NSNumber)?.intValue }
    }
}
