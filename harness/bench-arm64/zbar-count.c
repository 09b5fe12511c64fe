// SPDX-License-Identifier: Apache-2.0
/* zbar-count: the baseline of `make bench-arm64` (harness/bench-arm64/run.sh), cross-built for arm64
 * against the sysroot's libzbar and run under qemu-aarch64 with the instruction-count plugin.
 *
 *   zbar-count zbar FILE W H [STRIDE [SYMBOLOGIES]]
 *                               zbar on every full frame, as zbarcam scans (zbar's defaults: every
 *                               symbology it has, full density); prints "read FRAME SYMBOLOGY DATA"
 *                               the first time each payload is read, then "frames N" and
 *                               "scanned M": with STRIDE (default 1) only every STRIDE-th frame is
 *                               scanned (a sample: the cost per scanned frame is the figure);
 *                               SYMBOLOGIES (zbar's names, "qrcode,ean13,...") enables only those
 *   zbar-count floor FILE W H   touches each byte of each frame once (a sum): the floor
 *   zbar-count read FILE W H    only reads the frames: the part the other two share, subtracted
 *
 * FILE is `kiosk-dev count dump`'s: W*H bytes of luma a frame, in order. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zbar.h>

int main(int argc, char **argv) {
    if (argc < 5 || argc > 7) { fprintf(stderr, "usage: zbar-count zbar|floor|read FILE W H [STRIDE [SYMBOLOGIES]]\n"); return 64; }
    long stride = argc >= 6 ? atol(argv[5]) : 1, scanned = 0;
    if (stride < 1) stride = 1;
    const char *mode = argv[1];
    int w = atoi(argv[3]), h = atoi(argv[4]);
    size_t size = (size_t)w * h;
    FILE *in = fopen(argv[2], "rb");
    if (!in || w < 1 || h < 1) { perror(argv[2]); return 1; }
    unsigned char *buf = malloc(size);
    zbar_image_scanner_t *scanner = zbar_image_scanner_create();
    if (argc == 7) {
        zbar_image_scanner_set_config(scanner, ZBAR_NONE, ZBAR_CFG_ENABLE, 0);
        char list[512], setting[64];
        snprintf(list, sizeof list, "%s", argv[6]);
        for (char *name = strtok(list, ","); name; name = strtok(NULL, ",")) {
            snprintf(setting, sizeof setting, "%s.enable=1", name);
            if (zbar_image_scanner_parse_config(scanner, setting)) { fprintf(stderr, "zbar-count: unknown symbology %s\n", name); return 64; }
        }
    }
    zbar_image_t *image = zbar_image_create();
    zbar_image_set_format(image, zbar_fourcc('Y', '8', '0', '0'));
    zbar_image_set_size(image, w, h);
    char **seen = NULL;
    size_t nseen = 0;
    unsigned long long sum = 0;
    long frames = 0;
    while (fread(buf, 1, size, in) == size) {
        if (!strcmp(mode, "zbar") && frames % stride == 0) {
            scanned++;
            zbar_image_set_data(image, buf, size, NULL);
            if (zbar_scan_image(scanner, image) > 0) {
                for (const zbar_symbol_t *s = zbar_image_first_symbol(image); s; s = zbar_symbol_next(s)) {
                    const char *data = zbar_symbol_get_data(s);
                    size_t i;
                    for (i = 0; i < nseen && strcmp(seen[i], data); i++) {}
                    if (i == nseen) {
                        seen = realloc(seen, (nseen + 1) * sizeof *seen);
                        seen[nseen++] = strdup(data);
                        printf("read %ld %s %s\n", frames, zbar_get_symbol_name(zbar_symbol_get_type(s)), data);
                    }
                }
            }
        } else if (!strcmp(mode, "floor")) {
            for (size_t i = 0; i < size; i++) sum += buf[i];
        }
        frames++;
    }
    if (!strcmp(mode, "floor")) printf("sum %llu\n", sum);
    printf("frames %ld\nscanned %ld\n", frames, scanned);
    zbar_image_destroy(image);
    zbar_image_scanner_destroy(scanner);
    return 0;
}
