// SPDX-License-Identifier: Apache-2.0
/*
 * lc-probe: the libcamera plugin's test tool. It loads the plugin through the kiosk's own loader
 * (Sources/CLibcamera/loader.c) and uses nothing else.
 *
 *   lc-probe PLUGIN list
 *       "version V", "cameras N", then one "camera I ID" line each; exit 0 (1 on an error).
 *   lc-probe PLUGIN grab CAMERA W H N OUT.pgm [-t TIMEOUTS] [-w MS] [-f FPS] [-r REPEATS] [-s]
 *                                             [-c X,Y,W,H]
 *       Opens CAMERA ("" for the first) at about WxH, takes N frames and writes the last one's luma
 *       as a binary PGM (OUT.pgm "": none). One "open ..." line (ms: how long the open took), then
 *       one "frame ..." line per frame (ms since the open; age_us, CLOCK_MONOTONIC now minus the
 *       frame's timestamp; sequence, timestamp, format, size, strides, each metadata flag and
 *       value), "timeout MS" for each wait of MS (-w, default 1000) without a frame, and
 *       "close CLOSED|ABANDONED" at the end. It gives up after TIMEOUTS (-t, default 3) timeouts
 *       in a row and closes with stalled=0, so that the plugin decides by itself whether it can
 *       stop the camera; -s says stalled=1. -r opens, grabs and closes REPEATS times in the one
 *       process (the kiosk reopens so). -c sets ScalerCrop after the open ("crop ok", or
 *       "error crop: why", which is not fatal).
 *       Exit 0: N frames each time and CLOSED; 2: gave up after timeouts; 1: any other error.
 */
#define _POSIX_C_SOURCE 200809L
#include "kiosk_libcamera.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000 + ts.tv_nsec;
}
static long long now_ms(void) { return now_ns() / 1000000; }

static int usage(void) {
    fprintf(stderr, "usage: lc-probe PLUGIN list\n"
                    "       lc-probe PLUGIN grab CAMERA W H N OUT.pgm [-t TIMEOUTS] [-w MS] [-f FPS] [-r REPEATS] [-s]\n"
                    "                                                 [-c X,Y,W,H]\n");
    return 64;
}

static int write_pgm(const char *path, const struct kiosk_lc_frame *f) {
    FILE *out = fopen(path, "wb");
    if (!out) return -1;
    fprintf(out, "P5\n%d %d\n255\n", f->width, f->height);
    unsigned char *row = malloc((size_t)f->width);
    if (!row) {
        fclose(out);
        return -1;
    }
    for (int y = 0; y < f->height; y++) {
        const uint8_t *p = f->luma + (size_t)y * (size_t)f->row_stride;
        for (int x = 0; x < f->width; x++) row[x] = p[(size_t)x * (size_t)f->pixel_stride];
        fwrite(row, 1, (size_t)f->width, out);
    }
    free(row);
    return fclose(out) == 0 ? 0 : -1;
}

static int list(void) {
    char buf[8192];
    int n = kiosk_lc_list(buf, sizeof buf);
    if (n < 0) {
        printf("error %s\n", buf);
        return 1;
    }
    printf("cameras %d\n", n);
    int i = 0;
    for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) printf("camera %d %s\n", i++, line);
    return 0;
}

/* One open, N frames, close. 0, 1 or 2 as the exit status says. */
static int grab(const char *camera, int w, int h, int n, const char *out, int max_timeouts, int wait_ms,
                double fps, int say_stalled, const struct kiosk_lc_rect *crop) {
    char err[512] = "";
    struct kiosk_lc_info info;
    long long t0 = now_ms();
    kiosk_lc *cam = kiosk_lc_open(camera, w, h, fps, &info, err, sizeof err);
    long long opened = now_ms();
    if (!cam) {
        printf("error open: %s\n", err);
        return 1;
    }
    printf("open ms=%lld id=\"%s\" model=\"%s\" format=%s size=%dx%d fps=%g has_scaler_crop=%d "
           "crop_maximum=%d,%d,%dx%d has_metering=%d\n",
           opened - t0, info.id, info.model, info.format, info.width, info.height, info.fps, info.has_scaler_crop,
           info.crop_maximum.x, info.crop_maximum.y, info.crop_maximum.width, info.crop_maximum.height,
           info.has_metering);
    if (crop) {
        if (kiosk_lc_set_crop(cam, *crop, err, sizeof err) == 0) printf("crop ok\n");
        else printf("error crop: %s\n", err);
    }
    fflush(stdout);
    int got = 0, timeouts = 0, status = 0;
    struct kiosk_lc_frame f;
    while (got < n) {
        int r = kiosk_lc_next(cam, wait_ms, &f, err, sizeof err);
        if (r == KIOSK_LC_TIMEOUT) {
            printf("timeout %d\n", wait_ms);
            fflush(stdout);
            if (++timeouts >= max_timeouts) {
                status = 2;
                break;
            }
            continue;
        }
        if (r != KIOSK_LC_FRAME) {
            printf("error next: %s\n", err);
            status = 1;
            break;
        }
        timeouts = 0;
        got++;
        long long age_us = (now_ns() - (long long)f.timestamp_ns) / 1000;
        printf("frame %d ms=%lld age_us=%lld seq=%llu ts=%llu format=%s size=%dx%d row_stride=%d pixel_stride=%d "
               "exposure=%d:%g gain=%d:%g lux=%d:%g crop=%d:%d,%d,%dx%d\n",
               got, now_ms() - opened, age_us, (unsigned long long)f.sequence, (unsigned long long)f.timestamp_ns, info.format, f.width,
               f.height, f.row_stride, f.pixel_stride, f.has_exposure, f.exposure_us, f.has_gain, f.analogue_gain,
               f.has_lux, f.lux, f.has_crop, f.crop.x, f.crop.y, f.crop.width, f.crop.height);
        fflush(stdout);
        if (got == n && out && *out) {
            if (write_pgm(out, &f) < 0) {
                printf("error writing %s\n", out);
                status = 1;
            } else {
                printf("wrote %s\n", out);
            }
        }
    }
    int c = kiosk_lc_close(cam, say_stalled);
    printf("close %s\n", c == KIOSK_LC_CLOSED ? "CLOSED" : c == KIOSK_LC_ABANDONED ? "ABANDONED" : "?");
    fflush(stdout);
    if (status == 0 && c != KIOSK_LC_CLOSED) status = 1;
    return status;
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc < 3) return usage();
    char err[512] = "";
    if (kiosk_lc_load(argv[1], err, sizeof err) < 0) {
        printf("error load: %s\n", err);
        return 1;
    }
    if (!strcmp(argv[2], "list") && argc == 3) {
        printf("version %s\n", kiosk_lc_version());
        return list();
    }
    if (strcmp(argv[2], "grab") || argc < 8) return usage();
    const char *camera = argv[3];
    int w = atoi(argv[4]), h = atoi(argv[5]), n = atoi(argv[6]);
    const char *out = argv[7];
    int max_timeouts = 3, wait_ms = 1000, repeats = 1, say_stalled = 0;
    double fps = 0;
    struct kiosk_lc_rect crop_rect, *crop = NULL;
    for (int i = 8; i < argc; i++) {
        if (!strcmp(argv[i], "-s")) say_stalled = 1;
        else if (i + 1 < argc && !strcmp(argv[i], "-t")) max_timeouts = atoi(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "-w")) wait_ms = atoi(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "-f")) fps = atof(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "-r")) repeats = atoi(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "-c")) {
            if (sscanf(argv[++i], "%d,%d,%d,%d", &crop_rect.x, &crop_rect.y, &crop_rect.width, &crop_rect.height) != 4)
                return usage();
            crop = &crop_rect;
        }
        else return usage();
    }
    if (n < 1 || max_timeouts < 1 || repeats < 1) return usage();
    int status = 0;
    for (int i = 0; i < repeats && status == 0; i++) {
        if (repeats > 1) printf("repeat %d\n", i + 1);
        status = grab(camera, w, h, n, out, max_timeouts, wait_ms, fps, say_stalled, crop);
    }
    return status;
}
