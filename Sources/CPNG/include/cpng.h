// SPDX-License-Identifier: Apache-2.0
#ifndef KIOSK_CPNG_H
#define KIOSK_CPNG_H

/*
 * Thin shim over libpng's simplified API (png_image_*): read any PNG as 8-bit grey, write an
 * 8-bit grey PNG. It exists so Swift never sees libpng's setjmp/longjmp error handling; the
 * simplified API keeps that inside libpng. No policy lives here.
 */

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Reads the PNG at `path` (any colour type and bit depth) as 8-bit grey, `width` bytes a row.
 * Colour is converted to luma by libpng; an alpha channel is composited onto white (paper).
 * On success returns 0 and sets *width, *height and *pixels; free *pixels with kiosk_png_free.
 * On failure returns -1, leaves *pixels NULL and writes a NUL-terminated message to errbuf.
 */
int kiosk_png_read_gray(const char *path, int *width, int *height, uint8_t **pixels,
                        char *errbuf, size_t errlen);

/* Frees pixels returned by kiosk_png_read_gray. NULL is allowed. */
void kiosk_png_free(uint8_t *pixels);

/*
 * Writes `height` rows of `width` 8-bit grey pixels, rows `stride` bytes apart, as a PNG file.
 * Returns 0, or -1 with a NUL-terminated message in errbuf.
 */
int kiosk_png_write_gray(const char *path, int width, int height, int stride,
                         const uint8_t *pixels, char *errbuf, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
