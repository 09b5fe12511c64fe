// SPDX-License-Identifier: Apache-2.0
/*
 * The kiosk's cryptography: OpenSSL's libcrypto, nothing written here. Each function says what it
 * does; none has a policy. libcrypto is dlopen()ed on first use (kiosk_crypto_load), so a kiosk
 * that verifies no credential and speaks no OSDP never maps it.
 *
 * Results: 0 success, -1 failure (a message in err where the function takes one). The verify
 * functions return 1 for a valid signature, 0 for an invalid one, -1 when they could not check.
 */
#ifndef KIOSK_CRYPTO_H
#define KIOSK_CRYPTO_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Loads libcrypto (once; thread-safe). 0, or -1 with why (dlopen's or dlsym's message). */
int kiosk_crypto_load(char *err, size_t errlen);
/* "OpenSSL 3.0.19 27 Jan 2026" once loaded, else NULL. */
const char *kiosk_crypto_version(void);
/* The library file dlopen()ed ("libcrypto.so.3"): for doctor and error messages. */
const char *kiosk_crypto_library(void);
/* Before a thread that used libcrypto ends: its thread-local state freed now (see the .c). */
void kiosk_crypto_thread_stop(void);

int kiosk_sha256(const uint8_t *data, size_t len, uint8_t out[32]);
int kiosk_hmac_sha1(const uint8_t *key, size_t keylen, const uint8_t *data, size_t len, uint8_t out[20]);
int kiosk_hmac_sha256(const uint8_t *key, size_t keylen, const uint8_t *data, size_t len, uint8_t out[32]);

/* An issuer's public key, read from PEM (SubjectPublicKeyInfo, "BEGIN PUBLIC KEY"). */
typedef struct kiosk_public_key kiosk_public_key;
enum kiosk_key_kind { KIOSK_KEY_UNSUPPORTED = 0, KIOSK_KEY_EC_P256 = 1, KIOSK_KEY_ED25519 = 2 };
/* NULL with why in err for a file that is not a public key; a key of another type is returned
 * with *kind = KIOSK_KEY_UNSUPPORTED (and its type's name in err) so the caller can say so. */
kiosk_public_key *kiosk_public_key_from_pem(const uint8_t *pem, size_t len, int *kind, char *err, size_t errlen);
void kiosk_public_key_free(kiosk_public_key *key);
/* A holder's P-256 key from its SEC1 point (0x04||x||y, or 0x02/0x03||x compressed), decoded and
 * checked on the curve by OpenSSL; NULL with why in err for anything else. */
kiosk_public_key *kiosk_public_key_from_p256_point(const uint8_t *point, size_t len, char *err, size_t errlen);

/* COSE's ES256 signature is r||s (32 bytes each, RFC 9053 2.1); converted to DER here. */
int kiosk_verify_es256(const kiosk_public_key *key, const uint8_t *msg, size_t len, const uint8_t sig[64]);
int kiosk_verify_ed25519(const kiosk_public_key *key, const uint8_t *msg, size_t len, const uint8_t sig[64]);

/* AES-128, no padding: len is a multiple of 16 (OSDP Secure Channel, SIA OSDP 2.2 annex D). */
int kiosk_aes128_ecb_encrypt(const uint8_t key[16], const uint8_t *in, uint8_t *out, size_t len);
int kiosk_aes128_cbc_encrypt(const uint8_t key[16], const uint8_t iv[16], const uint8_t *in, uint8_t *out, size_t len);
int kiosk_aes128_cbc_decrypt(const uint8_t key[16], const uint8_t iv[16], const uint8_t *in, uint8_t *out, size_t len);

/* scrypt (RFC 7914) by EVP_PBE_scrypt: n = 2^LOGN, r, p; outlen bytes of key into out. */
int kiosk_scrypt(const uint8_t *password, size_t passlen, const uint8_t *salt, size_t saltlen,
                 uint64_t n, uint64_t r, uint64_t p, uint8_t *out, size_t outlen);
/* CRYPTO_memcmp: 1 when the len bytes of a and b are equal, 0 when not (in a time that does not
 * depend on where they differ), -1 when libcrypto is not there. */
int kiosk_equal_in_constant_time(const uint8_t *a, const uint8_t *b, size_t len);

/* Cryptographically strong random bytes (RAND_bytes). */
int kiosk_random_bytes(uint8_t *out, size_t len);

#ifdef __cplusplus
}
#endif
#endif
