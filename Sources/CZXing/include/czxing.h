// SPDX-License-Identifier: Apache-2.0
// zxing-cpp behind a C API: the only file pair that knows which zxing-cpp it is built against
// (Debian 12's 1.4.0 with DecodeHints and Result, Debian 13's 2.3 with ReaderOptions and Barcode).
// The Swift side sees these calls and nothing of C++.
#ifndef KIOSK_CZXING_H
#define KIOSK_CZXING_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// The kiosk's own numbers for zxing's formats (stable, whatever the library numbers them).
#define KIOSK_ZX_AZTEC             0x00001u
#define KIOSK_ZX_CODABAR           0x00002u
#define KIOSK_ZX_CODE39            0x00004u
#define KIOSK_ZX_CODE93            0x00008u
#define KIOSK_ZX_CODE128           0x00010u
#define KIOSK_ZX_DATABAR           0x00020u
#define KIOSK_ZX_DATABAR_EXPANDED  0x00040u
#define KIOSK_ZX_DATAMATRIX        0x00080u
#define KIOSK_ZX_EAN8              0x00100u
#define KIOSK_ZX_EAN13             0x00200u
#define KIOSK_ZX_ITF               0x00400u
#define KIOSK_ZX_PDF417            0x00800u
#define KIOSK_ZX_QRCODE            0x01000u
#define KIOSK_ZX_UPCA              0x02000u
#define KIOSK_ZX_UPCE              0x04000u
#define KIOSK_ZX_MICROQR           0x08000u

/// One reader: its options and the results of its last read. Not thread-safe (one per decoding
/// thread); reads of different readers may run at the same time.
typedef struct kiosk_zxing_reader kiosk_zxing_reader;

/// A reader for `formats` (KIOSK_ZX_* bits). `try_harder` and `try_rotate` are zxing's options of
/// those names; `min_line_count` is how many scan lines of a linear code must agree (zxing's
/// default is 2). NULL when out of memory.
kiosk_zxing_reader *kiosk_zxing_create(uint32_t formats, int try_harder, int try_rotate, int min_line_count);
void kiosk_zxing_destroy(kiosk_zxing_reader *reader);

/// Reads the codes of an 8-bit luma image: pixel (x, y) at data + y * row_stride + x * pixel_stride
/// (either stride may be negative: a mirrored view of a buffer). Returns how many codes were found
/// (each valid: no checksum or format error), or -1 when zxing threw (the count is then 0). The
/// codes stay readable with kiosk_zxing_code until the next read or the reader's end.
int kiosk_zxing_read(kiosk_zxing_reader *reader, const uint8_t *data, int width, int height,
                     int row_stride, int pixel_stride);

typedef struct {
    /// One KIOSK_ZX_* bit (0 for a format the kiosk has no number for).
    uint32_t format;
    /// The payload as encoded in the symbol, without character-set conversion.
    const uint8_t *bytes;
    size_t length;
    /// zxing's own text (UTF-8, NUL-terminated): by the ECI designators when `has_eci`, else by
    /// zxing's guess of the character set.
    const char *text;
    int has_eci;
    /// Scan lines that agreed (linear codes only; 0 for matrix codes).
    int line_count;
    /// The outline, in the image's pixels: top-left, top-right, bottom-right, bottom-left.
    int x[4];
    int y[4];
} kiosk_zxing_code;

/// The `index`th code of the last read; 0 when there is no such code, else 1.
int kiosk_zxing_code_at(const kiosk_zxing_reader *reader, int index, kiosk_zxing_code *out);

/// zxing's own name of a KIOSK_ZX_* format ("Aztec", "DataMatrix", ...) into `buffer` (always
/// NUL-terminated); the library's version ("1.4.0") for format 0.
void kiosk_zxing_name(uint32_t format, char *buffer, size_t size);

#ifdef __cplusplus
}
#endif

#endif
