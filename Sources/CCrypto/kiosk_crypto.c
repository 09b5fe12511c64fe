// SPDX-License-Identifier: Apache-2.0
/*
 * OpenSSL's libcrypto (3.x: bookworm's 3.0, trixie's 3.5), dlopen()ed on first use. The headers
 * give the types; every call goes through a pointer found by dlsym, so the kiosk binary does not
 * link libcrypto and an idle kiosk does not map it. Only this file knows OpenSSL's API.
 */
#define _GNU_SOURCE
#include "kiosk_crypto.h"
#include "kiosk_dlopen.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/ecdsa.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/pem.h>
#include <openssl/rand.h>

#define KIOSK_CRYPTO_SONAME "libcrypto.so.3"

/* Every libcrypto function used here, once. */
#define KIOSK_CRYPTO_FUNCTIONS(X) \
    X(OpenSSL_version) X(EVP_Digest) X(EVP_sha256) X(EVP_sha1) X(HMAC) \
    X(BIO_new_mem_buf) X(BIO_free) X(PEM_read_bio_PUBKEY) X(EVP_PKEY_free) \
    X(EVP_PKEY_get_base_id) X(EVP_PKEY_get_group_name) X(EVP_PKEY_get0_type_name) \
    X(ECDSA_SIG_new) X(ECDSA_SIG_set0) X(ECDSA_SIG_free) X(i2d_ECDSA_SIG) X(BN_bin2bn) X(BN_free) \
    X(CRYPTO_free) X(EVP_MD_CTX_new) X(EVP_MD_CTX_free) X(EVP_DigestVerifyInit) X(EVP_DigestVerify) \
    X(EVP_CIPHER_CTX_new) X(EVP_CIPHER_CTX_free) X(EVP_CipherInit_ex) X(EVP_CIPHER_CTX_set_padding) \
    X(EVP_CipherUpdate) X(EVP_CipherFinal_ex) X(EVP_aes_128_ecb) X(EVP_aes_128_cbc) \
    X(RAND_bytes) X(ERR_get_error) X(ERR_error_string_n) X(ERR_clear_error) X(OPENSSL_thread_stop) \
    X(OSSL_PARAM_construct_utf8_string) X(OSSL_PARAM_construct_end) \
    X(EVP_PKEY_CTX_new_from_name) X(EVP_PKEY_CTX_free) X(EVP_PKEY_fromdata_init) \
    X(EVP_PKEY_fromdata) X(EVP_PKEY_dup) X(EVP_PKEY_set1_encoded_public_key) \
    X(EVP_PBE_scrypt) X(CRYPTO_memcmp)

#define DECLARE(name) __typeof__(name) *name;
static struct { KIOSK_CRYPTO_FUNCTIONS(DECLARE) } ssl;
#undef DECLARE

static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;
static void *handle;
static char load_error[256];

int kiosk_crypto_load(char *err, size_t errlen) {
    pthread_mutex_lock(&load_lock);
    if (!handle && !load_error[0]) {
        static const char *const names[] = {KIOSK_CRYPTO_SONAME, NULL};
        void *h = kiosk_dlopen_first(names, NULL, load_error, sizeof load_error);
        if (h) {
            int found = 1;
#define FIND(name) if (found) found = (ssl.name = (__typeof__(ssl.name))kiosk_dlsym(h, #name, load_error, sizeof load_error)) != NULL;
            KIOSK_CRYPTO_FUNCTIONS(FIND)
#undef FIND
            if (found) handle = h; else dlclose(h);
        }
    }
    int rc = handle ? 0 : -1;
    if (rc) kiosk_say(err, errlen, "%s", load_error);
    pthread_mutex_unlock(&load_lock);
    return rc;
}

static int ready(void) { return handle || kiosk_crypto_load(NULL, 0) == 0; }

const char *kiosk_crypto_version(void) { return ready() ? ssl.OpenSSL_version(OPENSSL_VERSION) : NULL; }
const char *kiosk_crypto_library(void) { return KIOSK_CRYPTO_SONAME; }

/* A thread of the kiosk's that used libcrypto frees its thread-local state before it says it is
 * done. Left to the thread's own exit (a pthread key's destructor), that cleanup can run while
 * the main thread's exit() runs OPENSSL_cleanup (an atexit handler, which assumes every other
 * thread has stopped: openssl/openssl#6214), and both free the same state. Calling it twice is
 * harmless; without libcrypto loaded there is nothing to free. */
void kiosk_crypto_thread_stop(void) {
    pthread_mutex_lock(&load_lock);
    int loaded = handle != NULL;
    pthread_mutex_unlock(&load_lock);
    if (loaded) ssl.OPENSSL_thread_stop();
}

int kiosk_sha256(const uint8_t *data, size_t len, uint8_t out[32]) {
    if (!ready()) return -1;
    unsigned int n = 0;
    return ssl.EVP_Digest(data, len, out, &n, ssl.EVP_sha256(), NULL) == 1 && n == 32 ? 0 : -1;
}

static int hmac(const EVP_MD *md, size_t want, const uint8_t *key, size_t keylen,
                const uint8_t *data, size_t len, uint8_t *out) {
    if (keylen > 0x7fffffff) return -1;
    unsigned int n = 0;
    static const uint8_t empty[1];
    return ssl.HMAC(md, keylen ? key : empty, (int)keylen, data, len, out, &n) && n == want ? 0 : -1;
}

int kiosk_hmac_sha1(const uint8_t *key, size_t keylen, const uint8_t *data, size_t len, uint8_t out[20]) {
    return ready() ? hmac(ssl.EVP_sha1(), 20, key, keylen, data, len, out) : -1;
}

int kiosk_hmac_sha256(const uint8_t *key, size_t keylen, const uint8_t *data, size_t len, uint8_t out[32]) {
    return ready() ? hmac(ssl.EVP_sha256(), 32, key, keylen, data, len, out) : -1;
}

struct kiosk_public_key { EVP_PKEY *pkey; int kind; };

static void openssl_reason(char *err, size_t errlen, const char *what) {
    unsigned long e = ssl.ERR_get_error();
    char buf[200] = "no reason given";
    if (e) ssl.ERR_error_string_n(e, buf, sizeof buf);
    ssl.ERR_clear_error();
    kiosk_say(err, errlen, "%s: %s", what, buf);
}

kiosk_public_key *kiosk_public_key_from_pem(const uint8_t *pem, size_t len, int *kind, char *err, size_t errlen) {
    if (kind) *kind = KIOSK_KEY_UNSUPPORTED;
    if (kiosk_crypto_load(err, errlen) != 0) return NULL;
    if (len > 0x7fffffff) { kiosk_say(err, errlen, "too long for a PEM key"); return NULL; }
    BIO *bio = ssl.BIO_new_mem_buf(pem, (int)len);
    if (!bio) { openssl_reason(err, errlen, "BIO_new_mem_buf"); return NULL; }
    EVP_PKEY *pkey = ssl.PEM_read_bio_PUBKEY(bio, NULL, NULL, NULL);
    ssl.BIO_free(bio);
    if (!pkey) { openssl_reason(err, errlen, "not a PEM public key"); return NULL; }
    kiosk_public_key *key = calloc(1, sizeof *key);
    if (!key) { ssl.EVP_PKEY_free(pkey); kiosk_say(err, errlen, "out of memory"); return NULL; }
    key->pkey = pkey;
    int id = ssl.EVP_PKEY_get_base_id(pkey);
    if (id == EVP_PKEY_ED25519) {
        key->kind = KIOSK_KEY_ED25519;
    } else if (id == EVP_PKEY_EC) {
        char group[64] = "";
        size_t glen = 0;
        if (ssl.EVP_PKEY_get_group_name(pkey, group, sizeof group, &glen) == 1 &&
            (strcmp(group, "prime256v1") == 0 || strcmp(group, "P-256") == 0)) {
            key->kind = KIOSK_KEY_EC_P256;
        } else {
            kiosk_say(err, errlen, "EC key on curve %s (ES256 needs P-256)", group[0] ? group : "unknown");
        }
    } else {
        const char *name = ssl.EVP_PKEY_get0_type_name(pkey);
        kiosk_say(err, errlen, "%s key (ES256 needs EC P-256, EdDSA Ed25519)", name ? name : "unknown");
    }
    if (kind) *kind = key->kind;
    return key;
}

void kiosk_public_key_free(kiosk_public_key *key) {
    if (!key) return;
    if (handle) ssl.EVP_PKEY_free(key->pkey);
    free(key);
}

/* md NULL: a one-shot signature scheme (Ed25519) that hashes the message itself. */
static int digest_verify(EVP_PKEY *pkey, const EVP_MD *md, const uint8_t *sig, size_t siglen,
                         const uint8_t *msg, size_t len) {
    EVP_MD_CTX *ctx = ssl.EVP_MD_CTX_new();
    if (!ctx) return -1;
    int rc = -1;
    if (ssl.EVP_DigestVerifyInit(ctx, NULL, md, NULL, pkey) == 1) {
        int v = ssl.EVP_DigestVerify(ctx, sig, siglen, msg, len);
        rc = v == 1 ? 1 : (v == 0 ? 0 : -1);
        /* A malformed signature (say a DER error) is "invalid", not "could not check". */
        if (v < 0) rc = 0;
    }
    ssl.EVP_MD_CTX_free(ctx);
    ssl.ERR_clear_error();
    return rc;
}

int kiosk_verify_es256(const kiosk_public_key *key, const uint8_t *msg, size_t len, const uint8_t sig[64]) {
    if (!ready() || !key || key->kind != KIOSK_KEY_EC_P256) return -1;
    ECDSA_SIG *es = ssl.ECDSA_SIG_new();
    if (!es) return -1;
    BIGNUM *r = ssl.BN_bin2bn(sig, 32, NULL), *s = ssl.BN_bin2bn(sig + 32, 32, NULL);
    if (!r || !s || ssl.ECDSA_SIG_set0(es, r, s) != 1) {
        ssl.BN_free(r);
        ssl.BN_free(s);
        ssl.ECDSA_SIG_free(es);
        return -1;
    }
    unsigned char *der = NULL;
    int derlen = ssl.i2d_ECDSA_SIG(es, &der);
    ssl.ECDSA_SIG_free(es);
    if (derlen <= 0 || !der) return -1;
    int rc = digest_verify(key->pkey, ssl.EVP_sha256(), der, (size_t)derlen, msg, len);
    ssl.CRYPTO_free(der, __FILE__, __LINE__);
    return rc;
}

/* P-256's parameters, a key without a point, made once (EVP_PKEY_fromdata of the group's name) and
 * never freed: each holder's key is a copy of it (EVP_PKEY_dup) given its point. Making the key
 * from the group's name for every point (EVP_PKEY_CTX_new_from_name, EVP_PKEY_fromdata) fetched
 * the key manager and built the curve's group anew each time: 15 us of an uncompressed point's
 * 22 on the development machine (x86-64, OpenSSL 3.0), where a copy is 3. The copy is made
 * under the lock (EVP_PKEY_dup only reads the key it copies, but the lock says so without
 * reading OpenSSL). */
static pthread_mutex_t p256_lock = PTHREAD_MUTEX_INITIALIZER;
static EVP_PKEY *p256_params;

static EVP_PKEY *p256_key_without_point(char *err, size_t errlen) {
    pthread_mutex_lock(&p256_lock);
    if (!p256_params) {
        EVP_PKEY_CTX *ctx = ssl.EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL);
        char group[] = "prime256v1";
        OSSL_PARAM params[] = {
            ssl.OSSL_PARAM_construct_utf8_string(OSSL_PKEY_PARAM_GROUP_NAME, group, 0),
            ssl.OSSL_PARAM_construct_end(),
        };
        EVP_PKEY *pkey = NULL;
        if (ctx && ssl.EVP_PKEY_fromdata_init(ctx) == 1 && ssl.EVP_PKEY_fromdata(ctx, &pkey, EVP_PKEY_KEY_PARAMETERS, params) == 1) {
            p256_params = pkey;
        } else {
            ssl.EVP_PKEY_free(pkey);
            openssl_reason(err, errlen, "P-256's parameters");
        }
        ssl.EVP_PKEY_CTX_free(ctx);
    }
    EVP_PKEY *copy = NULL;
    if (p256_params && !(copy = ssl.EVP_PKEY_dup(p256_params))) openssl_reason(err, errlen, "EVP_PKEY_dup");
    pthread_mutex_unlock(&p256_lock);
    return copy;
}

/* A P-256 public key from its SEC1 point (RFC 5480 2.2, SEC 1 2.3.3): uncompressed 0x04||x||y
 * (65 bytes) or compressed 0x02/0x03||x (33 bytes), given to a copy of P-256's parameters.
 * OpenSSL decodes and checks it (EVP_PKEY_set1_encoded_public_key, by EC_KEY_oct2key and
 * EC_POINT_oct2point): a coordinate not below p is refused; a compressed point's y is a square
 * root of x^3 - 3x + b and an x without one is refused; the point is set by
 * EC_POINT_set_affine_coordinates, which refuses a point off the curve. The point at infinity
 * has no encoding of these lengths, and P-256's cofactor is 1: that is the whole of
 * SP 800-56A's partial public-key validation, what EVP_PKEY_public_check_quick would do again
 * (this shim did, at 5 of a new phone's 25 us with a compressed point; on points off the
 * curve, x without a root and x = p + 5, OpenSSL 3.0.19 and 3.5.9 refused each in the decoding
 * and never in the check; CryptoTests's refused points are refused by the decoding alone). */
kiosk_public_key *kiosk_public_key_from_p256_point(const uint8_t *point, size_t len, char *err, size_t errlen) {
    if (kiosk_crypto_load(err, errlen) != 0) return NULL;
    if (!((len == 65 && point[0] == 0x04) || (len == 33 && (point[0] == 0x02 || point[0] == 0x03)))) {
        kiosk_say(err, errlen, "not a SEC1 point of P-256 (65 bytes from 0x04, or 33 from 0x02 or 0x03)");
        return NULL;
    }
    EVP_PKEY *pkey = p256_key_without_point(err, errlen);
    if (!pkey) return NULL;
    if (ssl.EVP_PKEY_set1_encoded_public_key(pkey, point, len) != 1) {
        openssl_reason(err, errlen, "not a point of P-256");
        ssl.EVP_PKEY_free(pkey);
        return NULL;
    }
    kiosk_public_key *key = calloc(1, sizeof *key);
    if (!key) { ssl.EVP_PKEY_free(pkey); kiosk_say(err, errlen, "out of memory"); return NULL; }
    key->pkey = pkey;
    key->kind = KIOSK_KEY_EC_P256;
    return key;
}

int kiosk_verify_ed25519(const kiosk_public_key *key, const uint8_t *msg, size_t len, const uint8_t sig[64]) {
    if (!ready() || !key || key->kind != KIOSK_KEY_ED25519) return -1;
    return digest_verify(key->pkey, NULL, sig, 64, msg, len);
}

static int aes128(const EVP_CIPHER *cipher, int encrypt, const uint8_t key[16], const uint8_t *iv,
                  const uint8_t *in, uint8_t *out, size_t len) {
    if (len % 16 != 0 || len > 0x7ffffff0) return -1;
    EVP_CIPHER_CTX *ctx = ssl.EVP_CIPHER_CTX_new();
    if (!ctx) return -1;
    int ok = 0, n = 0, tail = 0;
    if (ssl.EVP_CipherInit_ex(ctx, cipher, NULL, key, iv, encrypt) == 1 &&
        ssl.EVP_CIPHER_CTX_set_padding(ctx, 0) == 1 &&
        ssl.EVP_CipherUpdate(ctx, out, &n, in, (int)len) == 1 &&
        ssl.EVP_CipherFinal_ex(ctx, out + n, &tail) == 1 && (size_t)(n + tail) == len) {
        ok = 1;
    }
    ssl.EVP_CIPHER_CTX_free(ctx);
    return ok ? 0 : -1;
}

int kiosk_aes128_ecb_encrypt(const uint8_t key[16], const uint8_t *in, uint8_t *out, size_t len) {
    return ready() ? aes128(ssl.EVP_aes_128_ecb(), 1, key, NULL, in, out, len) : -1;
}

int kiosk_aes128_cbc_encrypt(const uint8_t key[16], const uint8_t iv[16], const uint8_t *in, uint8_t *out, size_t len) {
    return ready() ? aes128(ssl.EVP_aes_128_cbc(), 1, key, iv, in, out, len) : -1;
}

int kiosk_aes128_cbc_decrypt(const uint8_t key[16], const uint8_t iv[16], const uint8_t *in, uint8_t *out, size_t len) {
    return ready() ? aes128(ssl.EVP_aes_128_cbc(), 0, key, iv, in, out, len) : -1;
}

int kiosk_random_bytes(uint8_t *out, size_t len) {
    if (!ready() || len > 0x7fffffff) return -1;
    return ssl.RAND_bytes(out, (int)len) == 1 ? 0 : -1;
}

int kiosk_scrypt(const uint8_t *password, size_t passlen, const uint8_t *salt, size_t saltlen,
                 uint64_t n, uint64_t r, uint64_t p, uint8_t *out, size_t outlen) {
    if (!ready()) return -1;
    static const char empty[1];
    /* maxmem: what N and r need (128 * N * r bytes) and a little more; OpenSSL's default of
     * 32 MiB would refuse a LOGN the admin chose on purpose. */
    uint64_t maxmem = 128 * n * r + 128 * r * p + (1u << 20);
    ssl.ERR_clear_error();
    return ssl.EVP_PBE_scrypt(passlen ? (const char *)password : empty, passlen, salt, saltlen, n, r, p, maxmem, out, outlen) == 1 ? 0 : -1;
}

int kiosk_equal_in_constant_time(const uint8_t *a, const uint8_t *b, size_t len) {
    if (!ready()) return -1;
    return ssl.CRYPTO_memcmp(a, b, len) == 0 ? 1 : 0;
}
