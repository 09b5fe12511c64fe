// SPDX-License-Identifier: Apache-2.0
#include "cpng.h"

#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void set_error(char *errbuf, size_t errlen, const char *message) {
    if (errbuf != NULL && errlen > 0) {
        snprintf(errbuf, errlen, "%s", message);
    }
}

int kiosk_png_read_gray(const char *path, int *width, int *height, uint8_t **pixels,
                        char *errbuf, size_t errlen) {
    *pixels = NULL;
    *width = 0;
    *height = 0;

    png_image image;
    memset(&image, 0, sizeof image); /* opaque must start NULL */
    image.version = PNG_IMAGE_VERSION;

    if (!png_image_begin_read_from_file(&image, path)) {
        /* libpng has already freed its state after a failed begin. */
        set_error(errbuf, errlen, image.message);
        return -1;
    }

    /* Ask for 8-bit RGB (libpng expands palettes, 16-bit and 1/2/4-bit) and take luma ourselves
     * below: libpng's own colour-to-grey works in linear light, which is not what a camera's
     * Y plane holds. A camera's luma is BT.601 weights on the gamma-encoded values. */
    image.format = PNG_FORMAT_RGB;

    size_t w = image.width;
    size_t h = image.height;
    if (w == 0 || h == 0 || w > INT32_MAX || h > INT32_MAX || h > SIZE_MAX / w) {
        png_image_free(&image);
        set_error(errbuf, errlen, "image dimensions out of range");
        return -1;
    }

    if (w > SIZE_MAX / 3 / h) {
        png_image_free(&image);
        set_error(errbuf, errlen, "image dimensions out of range");
        return -1;
    }
    uint8_t *buffer = malloc(w * h * 3);
    if (buffer == NULL) {
        png_image_free(&image);
        set_error(errbuf, errlen, "out of memory");
        return -1;
    }

    /* Transparent parts of a label are paper: composite alpha onto white. */
    png_color white = { 255, 255, 255 };
    if (!png_image_finish_read(&image, &white, buffer, (png_int_32)(w * 3), NULL)) {
        /* finish_read frees libpng's state on failure too. */
        set_error(errbuf, errlen, image.message);
        free(buffer);
        return -1;
    }
    /* BT.601 luma, in place: Y = (77 R + 150 G + 29 B) / 256, rounded. */
    for (size_t i = 0; i < w * h; i++) {
        const uint8_t *rgb = buffer + 3 * i;
        buffer[i] = (uint8_t)((77u * rgb[0] + 150u * rgb[1] + 29u * rgb[2] + 128u) >> 8);
    }

    *width = (int)w;
    *height = (int)h;
    *pixels = buffer;
    return 0;
}

void kiosk_png_free(uint8_t *pixels) {
    free(pixels);
}

int kiosk_png_write_gray(const char *path, int width, int height, int stride,
                         const uint8_t *pixels, char *errbuf, size_t errlen) {
    if (width <= 0 || height <= 0 || stride < width || pixels == NULL) {
        set_error(errbuf, errlen, "invalid image arguments");
        return -1;
    }

    png_image image;
    memset(&image, 0, sizeof image);
    image.version = PNG_IMAGE_VERSION;
    image.width = (png_uint_32)width;
    image.height = (png_uint_32)height;
    image.format = PNG_FORMAT_GRAY;

    if (!png_image_write_to_file(&image, path, 0, pixels, (png_int_32)stride, NULL)) {
        set_error(errbuf, errlen, image.message);
        png_image_free(&image);
        return -1;
    }
    return 0;
}
