// OpenSSL's libcrypto (Debian's libssl-dev) for the bearer JWTs of `sluice serve` (docs/ACCESS.md): the
// RS256 and ES256 signature checks and HS256's HMAC. The keys are built from a JWKS's numbers through
// OpenSSL 3's parameter API (the RSA_ and EC_KEY_ setters are deprecated). Everything here is a thin
// wrapper with a sluice_crypto_ prefix; SluiceServe's JWTVerifier is their main user, and every executable
// calls sluice_crypto_keep_at_exit at its start (SluiceCommandLine's OpenSSLAtExit).
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/ecdsa.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>
#include <stddef.h>
#include <stdint.h>

/// An RSA public key from its modulus and public exponent (big-endian bytes); NULL when they are not one.
static inline EVP_PKEY *sluice_crypto_rsa_public_key(
    const uint8_t *n, size_t n_length, const uint8_t *e, size_t e_length) {
    EVP_PKEY *key = NULL;
    BIGNUM *modulus = BN_bin2bn(n, (int)n_length, NULL);
    BIGNUM *exponent = BN_bin2bn(e, (int)e_length, NULL);
    OSSL_PARAM_BLD *builder = OSSL_PARAM_BLD_new();
    OSSL_PARAM *params = NULL;
    EVP_PKEY_CTX *context = EVP_PKEY_CTX_new_from_name(NULL, "RSA", NULL);
    if (modulus && exponent && builder && context
        && OSSL_PARAM_BLD_push_BN(builder, OSSL_PKEY_PARAM_RSA_N, modulus)
        && OSSL_PARAM_BLD_push_BN(builder, OSSL_PKEY_PARAM_RSA_E, exponent)
        && (params = OSSL_PARAM_BLD_to_param(builder)) != NULL
        && EVP_PKEY_fromdata_init(context) == 1) {
        if (EVP_PKEY_fromdata(context, &key, EVP_PKEY_PUBLIC_KEY, params) != 1) key = NULL;
    }
    EVP_PKEY_CTX_free(context);
    OSSL_PARAM_free(params);
    OSSL_PARAM_BLD_free(builder);
    BN_free(exponent);
    BN_free(modulus);
    return key;
}

/// A P-256 public key from its uncompressed point (0x04 || x || y, 65 bytes); NULL when it is not a point
/// of the curve.
static inline EVP_PKEY *sluice_crypto_p256_public_key(const uint8_t *point, size_t point_length) {
    EVP_PKEY *key = NULL;
    OSSL_PARAM_BLD *builder = OSSL_PARAM_BLD_new();
    OSSL_PARAM *params = NULL;
    EVP_PKEY_CTX *context = EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL);
    if (builder && context
        && OSSL_PARAM_BLD_push_utf8_string(builder, OSSL_PKEY_PARAM_GROUP_NAME, "prime256v1", 0)
        && OSSL_PARAM_BLD_push_octet_string(builder, OSSL_PKEY_PARAM_PUB_KEY, point, point_length)
        && (params = OSSL_PARAM_BLD_to_param(builder)) != NULL
        && EVP_PKEY_fromdata_init(context) == 1) {
        if (EVP_PKEY_fromdata(context, &key, EVP_PKEY_PUBLIC_KEY, params) != 1) key = NULL;
    }
    EVP_PKEY_CTX_free(context);
    OSSL_PARAM_free(params);
    OSSL_PARAM_BLD_free(builder);
    if (key) {
        // fromdata takes any bytes; the public-key check proves the point is on the curve.
        EVP_PKEY_CTX *check = EVP_PKEY_CTX_new_from_pkey(NULL, key, NULL);
        int valid = check ? EVP_PKEY_public_check(check) : 0;
        EVP_PKEY_CTX_free(check);
        if (valid != 1) {
            EVP_PKEY_free(key);
            key = NULL;
        }
    }
    return key;
}

/// The key's size in bits.
static inline int sluice_crypto_key_bits(const EVP_PKEY *key) { return EVP_PKEY_get_bits(key); }

static inline void sluice_crypto_free_key(EVP_PKEY *key) { EVP_PKEY_free(key); }

/// 1 when `signature` is `key`'s SHA-256 signature of `data` (RSA: PKCS #1 v1.5; EC: DER-encoded ECDSA).
static inline int sluice_crypto_verify_sha256(
    EVP_PKEY *key, const uint8_t *data, size_t data_length, const uint8_t *signature, size_t signature_length) {
    EVP_MD_CTX *context = EVP_MD_CTX_new();
    int result = 0;
    if (context && EVP_DigestVerifyInit(context, NULL, EVP_sha256(), NULL, key) == 1) {
        result = EVP_DigestVerify(context, signature, signature_length, data, data_length) == 1;
    }
    EVP_MD_CTX_free(context);
    return result;
}

/// A JWS ES256 signature (r || s, 32 bytes each) as the DER ECDSA-Sig-Value libcrypto verifies, written to
/// `out` (at least 72 bytes); its length, or 0.
static inline size_t sluice_crypto_ecdsa_der(const uint8_t *raw, uint8_t *out, size_t out_capacity) {
    ECDSA_SIG *signature = ECDSA_SIG_new();
    BIGNUM *r = BN_bin2bn(raw, 32, NULL);
    BIGNUM *s = BN_bin2bn(raw + 32, 32, NULL);
    size_t length = 0;
    if (signature && r && s && ECDSA_SIG_set0(signature, r, s) == 1) {
        r = NULL;  // owned by the signature now
        s = NULL;
        int needed = i2d_ECDSA_SIG(signature, NULL);
        if (needed > 0 && (size_t)needed <= out_capacity) {
            uint8_t *cursor = out;
            length = (size_t)i2d_ECDSA_SIG(signature, &cursor);
        }
    }
    BN_free(r);
    BN_free(s);
    ECDSA_SIG_free(signature);
    return length;
}

/// HMAC-SHA256 of `data` under `key` into `out` (32 bytes); 1 on success.
static inline int sluice_crypto_hmac_sha256(
    const uint8_t *key, size_t key_length, const uint8_t *data, size_t data_length, uint8_t *out) {
    size_t written = 0;
    return EVP_Q_mac(NULL, "HMAC", NULL, "SHA256", NULL, key, key_length, data, data_length, out, 32, &written)
               != NULL
        && written == 32;
}

/// Tells libcrypto not to free its global state in an `atexit` handler (OPENSSL_INIT_NO_ATEXIT); 1 on success.
/// Must come before anything else initializes libcrypto (libpq, libcurl): the first initialization decides.
/// Without it, `exit` on one thread frees what another thread (a store's connection thread ending, an HTTP
/// transfer) is using inside libcrypto at that moment, and the process crashes on its way out.
static inline int sluice_crypto_keep_at_exit(void) { return OPENSSL_init_crypto(OPENSSL_INIT_NO_ATEXIT, NULL); }

/// One HMAC-SHA256 through libcrypto's provider lookup (fetches and frees the algorithms each time): work that
/// touches libcrypto's global state, for the exit probe (`sluice crypto-exit-probe`). 1 on success.
static inline int sluice_crypto_exercise(void) {
    static const uint8_t key[32] = {1};
    uint8_t out[32];
    return sluice_crypto_hmac_sha256(key, sizeof key, key, sizeof key, out);
}
