// SPDX-License-Identifier: Apache-2.0
/*
 * zlib's inflate behind one function with a hard cap on what it produces (a credential's
 * payload: a zlib bomb stops at the cap). inflateInit is a macro, so Swift cannot call it.
 */
#ifndef KIOSK_ZLIB_H
#define KIOSK_ZLIB_H

#include <stddef.h>
#include <stdint.h>

enum kiosk_inflate_result { KIOSK_INFLATE_OK = 0, KIOSK_INFLATE_MALFORMED = -1, KIOSK_INFLATE_TOO_LARGE = -2 };

/* Inflates one whole zlib stream (RFC 1950) from in into out (at most cap bytes); *outlen is what
 * it produced. MALFORMED: not a complete, valid stream, or bytes after its end; TOO_LARGE: it
 * would produce more than cap bytes. */
int kiosk_inflate(const uint8_t *in, size_t len, uint8_t *out, size_t cap, size_t *outlen);

#endif
