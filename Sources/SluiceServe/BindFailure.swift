import NIOCore
import SluiceCore

#if canImport(Glibc)
import Glibc
#endif

/// A server that cannot listen is a configuration or environment problem, not a bug: exit 1 with what to
/// change (docs/OPERATIONS.md, exit codes), never 70.
enum BindFailure {
    static func error(_ error: any Error, host: String, port: Int) -> SluiceError {
        let address = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        let reason: String
        switch error {
        case let error as IOError:
            switch error.errnoCode {
            case EADDRINUSE:
                reason =
                    "the port \(port) is in use (another server, or an earlier sluice serve still stopping): "
                    + "stop it or choose another port (--port, serve.port)"
            case EADDRNOTAVAIL:
                reason = "\(host) is not an address of this machine: set serve.host (--host) to one of its addresses"
            case EACCES:
                reason = "permission denied (ports below 1024 need privileges): choose a port from 1024 (--port)"
            default:
                reason = "\(error): check serve.host and serve.port (--host, --port)"
            }
        case is SocketAddressError:
            reason = "\(host) does not resolve to an address: set serve.host (--host) to an address or a known name"
        default:
            reason = "\(error): check serve.host and serve.port (--host, --port)"
        }
        return SluiceError(.configuration, "cannot listen on \(address): \(reason)")
    }
}
