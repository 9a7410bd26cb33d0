import CCurl
import Foundation
import SluiceCore
import Synchronization

/// The one thread that owns a curl multi handle and drives every transfer of an ``HTTPClient``.
///
/// Callers hand transfers over through a locked inbox and wake the thread with `curl_multi_wakeup` (the
/// one multi call that is safe from any thread); the thread adds them, runs `curl_multi_perform`, resumes
/// the continuation of each finished transfer and sleeps in `curl_multi_poll` until a socket is ready, a
/// timer is due or the inbox has something. No Swift task ever blocks: the cooperative pool only awaits.
/// The multi handle keeps the connection pool (keep-alive, HTTP/2 multiplexing), the DNS cache and TLS
/// sessions for all requests.
final class CurlMultiLoop: @unchecked Sendable {
    private struct Inbox {
        var added: [CurlTransfer] = []
        var cancelled: [CurlTransfer] = []
        var stopping = false
    }

    private let configuration: HTTPClient.Configuration
    /// Written once in `init`; afterwards only the loop thread uses it, except `curl_multi_wakeup`.
    private let multi: UnsafeMutableRawPointer?
    private let inbox = Mutex(Inbox())
    /// Loop thread only: transfers added to the multi handle, by easy handle.
    private var active: [UnsafeMutableRawPointer: CurlTransfer] = [:]

    init(configuration: HTTPClient.Configuration) {
        self.configuration = configuration
        if CurlGlobal.initResult == CURLE_OK, let multi = curl_multi_init() {
            _ = sluice_curl_multi_setopt_long(multi, CURLMOPT_PIPELINING, Int(CURLPIPE_MULTIPLEX))
            _ = sluice_curl_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, configuration.maxConnectionsPerHost)
            _ = sluice_curl_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, configuration.maxCachedConnections)
            self.multi = multi
            let thread = Thread { [self] in
                Thread.current.name = "sluice-http"
                run(self.multi!)
            }
            thread.stackSize = 1 << 20
            thread.start()
        } else {
            self.multi = nil
        }
    }

    /// Hands a transfer to the loop. Any thread.
    func submit(_ transfer: CurlTransfer) {
        guard let multi else {
            transfer.delivery.complete(.failure(SluiceError(.io, "libcurl could not be initialized")))
            return
        }
        let accepted = inbox.withLock { inbox in
            guard !inbox.stopping else { return false }
            inbox.added.append(transfer)
            return true
        }
        guard accepted else {
            transfer.delivery.complete(.failure(SluiceError(.state, "the HTTP client is shut down")))
            return
        }
        curl_multi_wakeup(multi)
    }

    /// Asks the loop to abandon a transfer whose task was cancelled. Any thread.
    func cancel(_ transfer: CurlTransfer) {
        transfer.cancelled.store(true, ordering: .releasing)
        guard let multi else { return }
        inbox.withLock { $0.cancelled.append(transfer) }
        curl_multi_wakeup(multi)
    }

    /// Stops the thread after failing whatever is still in flight. Any thread.
    func stop() {
        guard let multi else { return }
        inbox.withLock { $0.stopping = true }
        curl_multi_wakeup(multi)
    }

    private func run(_ multi: UnsafeMutableRawPointer) {
        while true {
            let work = inbox.withLock { inbox in
                defer {
                    inbox.added.removeAll()
                    inbox.cancelled.removeAll()
                }
                return inbox
            }
            for transfer in work.added { start(transfer, on: multi) }
            for transfer in work.cancelled {
                guard let easy = transfer.easy, active[easy] === transfer else { continue }
                finish(transfer, on: multi, with: .failure(CancellationError()))
            }
            if work.stopping {
                for transfer in active.values {
                    finish(transfer, on: multi, with: .failure(SluiceError(.state, "the HTTP client is shut down")))
                }
                curl_multi_cleanup(multi)
                return
            }

            var running: Int32 = 0
            _ = curl_multi_perform(multi, &running)
            var queued: Int32 = 0
            while let message = curl_multi_info_read(multi, &queued) {
                guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle,
                    let transfer = active[easy]
                else { continue }
                let code = sluice_curl_msg_result(message)
                finish(
                    transfer,
                    on: multi,
                    with: code == CURLE_OK ? .success(transfer.response()) : .failure(transfer.failure(code))
                )
            }
            var ready: Int32 = 0
            _ = curl_multi_poll(multi, nil, 0, 1000, &ready)
        }
    }

    private func start(_ transfer: CurlTransfer, on multi: UnsafeMutableRawPointer) {
        if transfer.cancelled.load(ordering: .acquiring) {
            transfer.delivery.complete(.failure(CancellationError()))
            return
        }
        do {
            try transfer.prepare(configuration)
        } catch {
            transfer.delivery.complete(.failure(error))
            return
        }
        guard let easy = transfer.easy else { return }
        let code = curl_multi_add_handle(multi, easy)
        guard code == CURLM_OK else {
            transfer.delivery.complete(
                .failure(SluiceError(.io, "curl_multi_add_handle: \(String(cString: curl_multi_strerror(code)))"))
            )
            return
        }
        active[easy] = transfer
    }

    private func finish(
        _ transfer: CurlTransfer,
        on multi: UnsafeMutableRawPointer,
        with result: Result<HTTPResponse, any Error>
    ) {
        if let easy = transfer.easy {
            curl_multi_remove_handle(multi, easy)
            active[easy] = nil
        }
        transfer.delivery.complete(result)
    }
}
