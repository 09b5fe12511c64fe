// SPDX-License-Identifier: Apache-2.0
#include "kiosk_zlib.h"

#include <string.h>
#include <zlib.h>

int kiosk_inflate(const uint8_t *in, size_t len, uint8_t *out, size_t cap, size_t *outlen) {
    *outlen = 0;
    if (len > UINT32_MAX || cap > UINT32_MAX) return KIOSK_INFLATE_TOO_LARGE;
    z_stream s;
    memset(&s, 0, sizeof s);
    if (inflateInit(&s) != Z_OK) return KIOSK_INFLATE_MALFORMED;
    s.next_in = (Bytef *)in;
    s.avail_in = (uInt)len;
    s.next_out = out;
    s.avail_out = (uInt)cap;
    int rc = inflate(&s, Z_FINISH);
    int result;
    if (rc == Z_STREAM_END) {
        result = s.avail_in == 0 ? KIOSK_INFLATE_OK : KIOSK_INFLATE_MALFORMED;
    } else if (rc == Z_BUF_ERROR && s.avail_out == 0 && s.avail_in > 0) {
        result = KIOSK_INFLATE_TOO_LARGE;
    } else if ((rc == Z_BUF_ERROR || rc == Z_OK) && s.avail_out == 0) {
        /* The output is full and the stream has not ended: more would follow. */
        result = KIOSK_INFLATE_TOO_LARGE;
    } else {
        result = KIOSK_INFLATE_MALFORMED;
    }
    *outlen = s.total_out;
    inflateEnd(&s);
    return result;
}
