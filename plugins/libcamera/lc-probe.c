// SPDX-License-Identifier: Apache-2.0
/*
 * lc-probe: the libcamera plugin's test tool. It loads the plugin through the kiosk's own loader
 * (Sources/CLibcamera/loader.c) and uses nothing else.
 *
 *   lc-probe PLUGIN list
 *       "version V", "cameras N", then one "camera I ID" line each; exit 0 (1 on an error).
 *   lc-probe PLUGIN grab CAMERA W H N OUT.pgm [-t TIMEOUTS] [-w MS] [-f FPS] [-r REPEATS] [-s]
 *                                             [-c X,Y,W,H] [-C NAME=VALUE]... [-P NAME=VALUE]...
 *       Opens CAMERA ("" for the first) at about WxH, takes N frames and writes the last one's luma
 *       as a binary PGM (OUT.pgm "": none). One "open ..." line (ms: how long the open took; its
 *       has_metering says whether AeMeteringMode is among the advertised controls), "controls N
 *       left_out=M" and one "control NAME type=int|float|rectangles|other [min=A max=B [def=D]]"
 *       line per advertised control, then "start ok" (or "error start: why", exit 1) once the
 *       camera started with the -C controls in Camera::start()'s list; "request-controls ok" (or
 *       "error request-controls: why", not fatal) when -P controls were given to every request.
 *       A VALUE is an integer, a float, or rectangles X,Y,W,H[;X,Y,W,H...]: its kind is the
 *       advertised control's, or for a name the camera lacks, guessed from the form (so that the
 *       plugin's refusal can be seen). Then one "frame ..." line per frame (ms since the open;
 *       age_us, CLOCK_MONOTONIC now minus the frame's timestamp; sequence, timestamp, format,
 *       size, strides, each metadata flag and value: lens, LensPosition; af_state, AfState; fom,
 *       FocusFoM), "timeout MS" for each wait of MS (-w, default 1000) without a frame, and
 *       "close CLOSED|ABANDONED" at the end. It gives up after TIMEOUTS (-t, default 3) timeouts
 *       in a row and closes with stalled=0, so that the plugin decides by itself whether it can
 *       stop the camera; -s says stalled=1. -r opens, grabs and closes REPEATS times in the one
 *       process (the kiosk reopens so). -c sets ScalerCrop after the open ("crop ok", or
 *       "error crop: why", which is not fatal).
 *       Exit 0: N frames each time and CLOSED; 2: gave up after timeouts; 1: any other error.
 */
#define _POSIX_C_SOURCE 200809L
#include "kiosk_libcamera.h"

#include <errno.h>
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
                    "                                                 [-c X,Y,W,H] [-C NAME=VALUE]... [-P NAME=VALUE]...\n");
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

#define MAX_CONTROLS 16

/* -C and -P arguments, as given. */
struct control_args {
    const char *text[MAX_CONTROLS];
    int count;
};

static const char *kind_name(int32_t type) {
    switch (type) {
    case KIOSK_LC_INT: return "int";
    case KIOSK_LC_FLOAT: return "float";
    case KIOSK_LC_RECTANGLES: return "rectangles";
    default: return "other";
    }
}

static void print_offers(const struct kiosk_lc_info *info) {
    printf("controls %d left_out=%d\n", info->offer_count, info->offers_left_out);
    for (int i = 0; i < info->offer_count && i < KIOSK_LC_MAX_OFFERS; i++) {
        const struct kiosk_lc_control_offer *o = &info->offers[i];
        printf("control %s type=%s", o->name, kind_name(o->type));
        if (o->numeric) printf(" min=%g max=%g", o->min, o->max);
        if (o->has_def) printf(" def=%g", o->def);
        printf("\n");
    }
}

static int has_offer(const struct kiosk_lc_info *info, const char *name) {
    for (int i = 0; i < info->offer_count && i < KIOSK_LC_MAX_OFFERS; i++)
        if (!strcmp(info->offers[i].name, name)) return 1;
    return 0;
}

/* NAME=VALUE into c, its kind the advertised control's or guessed from VALUE's form. 0, or -1 and
 * why in err. */
static int parse_control(const char *text, const struct kiosk_lc_info *info, struct kiosk_lc_control *c, char *err,
                         size_t errlen) {
    memset(c, 0, sizeof *c);
    const char *eq = strchr(text, '=');
    if (!eq || eq == text || (size_t)(eq - text) >= sizeof c->name) {
        snprintf(err, errlen, "%s: want NAME=VALUE", text);
        return -1;
    }
    memcpy(c->name, text, (size_t)(eq - text));
    const char *value = eq + 1;
    c->type = strchr(value, ',') ? KIOSK_LC_RECTANGLES : strchr(value, '.') ? KIOSK_LC_FLOAT : KIOSK_LC_INT;
    for (int i = 0; i < info->offer_count && i < KIOSK_LC_MAX_OFFERS; i++)
        if (!strcmp(info->offers[i].name, c->name)) c->type = info->offers[i].type;
    char *end = NULL;
    errno = 0;
    switch (c->type) {
    case KIOSK_LC_INT: {
        long v = strtol(value, &end, 10);
        if (errno || end == value || *end || v < INT32_MIN || v > INT32_MAX) break;
        c->i = (int32_t)v;
        return 0;
    }
    case KIOSK_LC_FLOAT:
        c->f = strtof(value, &end);
        if (errno || end == value || *end) break;
        return 0;
    case KIOSK_LC_RECTANGLES: {
        const char *p = value;
        while (*p && c->count < 4) {
            struct kiosk_lc_rect *r = &c->rects[c->count];
            int used = 0;
            if (sscanf(p, "%d,%d,%d,%d%n", &r->x, &r->y, &r->width, &r->height, &used) != 4) break;
            c->count++;
            p += used;
            if (*p == ';') p++;
            else break;
        }
        if (c->count == 0 || *p) break;
        return 0;
    }
    default:
        snprintf(err, errlen, "%s is of a kind lc-probe does not set", c->name);
        return -1;
    }
    snprintf(err, errlen, "%s: \"%s\" is not %s value", c->name, value,
             c->type == KIOSK_LC_INT ? "an int" : c->type == KIOSK_LC_FLOAT ? "a float" : "a rectangles");
    return -1;
}

/* The arguments as controls; -1 after printing "error WHAT: why". */
static int parse_controls(const char *what, const struct control_args *args, const struct kiosk_lc_info *info,
                          struct kiosk_lc_control *out) {
    char err[256];
    for (int i = 0; i < args->count; i++) {
        if (parse_control(args->text[i], info, &out[i], err, sizeof err) < 0) {
            printf("error %s: %s\n", what, err);
            return -1;
        }
    }
    return 0;
}

/* One open, start, N frames, close. 0, 1 or 2 as the exit status says. */
static int grab(const char *camera, int w, int h, int n, const char *out, int max_timeouts, int wait_ms,
                double fps, int say_stalled, const struct kiosk_lc_rect *crop, const struct control_args *at_start,
                const struct control_args *per_request) {
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
           has_offer(&info, "AeMeteringMode"));
    print_offers(&info);
    int got = 0, timeouts = 0, status = 0;
    struct kiosk_lc_control start_controls[MAX_CONTROLS], request_controls[MAX_CONTROLS];
    if (parse_controls("start", at_start, &info, start_controls) < 0) {
        status = 1;
    } else if (kiosk_lc_start(cam, start_controls, at_start->count, err, sizeof err) < 0) {
        printf("error start: %s\n", err);
        status = 1;
    } else {
        printf("start ok\n");
    }
    if (status == 0 && per_request->count > 0 && parse_controls("request-controls", per_request, &info, request_controls) == 0) {
        if (kiosk_lc_set_controls(cam, request_controls, per_request->count, err, sizeof err) == 0)
            printf("request-controls ok\n");
        else
            printf("error request-controls: %s\n", err);
    }
    if (status == 0 && crop) {
        if (kiosk_lc_set_crop(cam, *crop, err, sizeof err) == 0) printf("crop ok\n");
        else printf("error crop: %s\n", err);
    }
    fflush(stdout);
    struct kiosk_lc_frame f;
    while (status == 0 && got < n) {
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
               "exposure=%d:%g gain=%d:%g lux=%d:%g crop=%d:%d,%d,%dx%d lens=%d:%g af_state=%d:%d fom=%d:%d\n",
               got, now_ms() - opened, age_us, (unsigned long long)f.sequence, (unsigned long long)f.timestamp_ns, info.format, f.width,
               f.height, f.row_stride, f.pixel_stride, f.has_exposure, f.exposure_us, f.has_gain, f.analogue_gain,
               f.has_lux, f.lux, f.has_crop, f.crop.x, f.crop.y, f.crop.width, f.crop.height, f.has_lens_position,
               f.lens_position, f.has_af_state, f.af_state, f.has_focus_fom, f.focus_fom);
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
    struct control_args at_start = {{0}, 0}, per_request = {{0}, 0};
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
        else if (i + 1 < argc && (!strcmp(argv[i], "-C") || !strcmp(argv[i], "-P"))) {
            struct control_args *a = argv[i][1] == 'C' ? &at_start : &per_request;
            if (a->count == MAX_CONTROLS) return usage();
            a->text[a->count++] = argv[++i];
        }
        else return usage();
    }
    if (n < 1 || max_timeouts < 1 || repeats < 1) return usage();
    int status = 0;
    for (int i = 0; i < repeats && status == 0; i++) {
        if (repeats > 1) printf("repeat %d\n", i + 1);
        status = grab(camera, w, h, n, out, max_timeouts, wait_ms, fps, say_stalled, crop, &at_start, &per_request);
    }
    return status;
}
