import CCurl

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Process-wide libcurl set-up, done once before the first handle.
enum CurlGlobal {
    /// `curl_global_init` runs once per process (Swift initializes a static `let` exactly once,
    /// thread-safely). SIGPIPE is ignored as libcurl advises with `CURLOPT_NOSIGNAL`: a peer that closes
    /// a connection must not kill the process.
    static let initResult: CURLcode = {
        signal(SIGPIPE, SIG_IGN)
        return curl_global_init(Int(CURL_GLOBAL_DEFAULT))
    }()
}
