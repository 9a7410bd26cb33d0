import CLibCrypto

/// libcrypto's global state is kept until the process is gone, instead of being freed by OpenSSL's `atexit`
/// handler.
///
/// A Sluice process exits (`exit`, from whichever thread ends the command) while threads of its own may still
/// be inside libcrypto: a store's connection threads ending (libpq's SCRAM and TLS state is libcrypto's, and
/// a thread that used it frees its part as it ends), an HTTP transfer's TLS (libcurl), a JWT check in the
/// server. OpenSSL's handler frees the providers, locks and per-thread keys those threads use, and the process
/// crashes on its way out (seen as SIGABRT on a `sl-pgvector` thread after `sluice generation promote` had
/// decided its exit code). The memory is the kernel's to take back at exit anyway; so every executable asks
/// libcrypto not to register that handler before anything else initializes it (the first initialization
/// decides). `sluice crypto-exit-probe` is the test's reproduction.
package enum OpenSSLAtExit {
    /// Call first in `main`, before any library (libpq, libcurl) initializes libcrypto.
    package static func keepGlobalState() {
        _ = sluice_crypto_keep_at_exit()
    }
}
