// SPDX-License-Identifier: Apache-2.0
/*
 * libasound, dlopen()ed on first use. The headers give the types and constants; every call goes
 * through a pointer found by dlsym, so the kiosk binary does not link libasound. Only this file
 * knows ALSA's API.
 */
#define _GNU_SOURCE
#include "kiosk_alsa.h"
#include "kiosk_dlopen.h"

#include <alsa/asoundlib.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Every libasound function used here, once. */
#define KIOSK_ALSA_FUNCTIONS(X) \
    X(snd_asoundlib_version) X(snd_lib_error_set_handler) X(snd_strerror) \
    X(snd_pcm_open) X(snd_pcm_nonblock) X(snd_pcm_set_params) X(snd_pcm_writei) X(snd_pcm_recover) \
    X(snd_pcm_drop) X(snd_pcm_prepare) X(snd_pcm_drain) X(snd_pcm_close) \
    X(snd_card_next) X(snd_card_get_name) X(snd_card_get_longname)

#define DECLARE(name) __typeof__(name) *name;
static struct { KIOSK_ALSA_FUNCTIONS(DECLARE) } alsa;
#undef DECLARE

static pthread_once_t once = PTHREAD_ONCE_INIT;
static void *handle;
static char load_error[256];

struct kiosk_pcm {
    snd_pcm_t *pcm;
};

/* ALSA prints its errors to stderr ("ALSA lib pcm.c:2666:(snd_pcm_open_noupdate) Unknown PCM
 * x"): that would break the log's one-event-a-line format. The caller gets the error code. */
static void quiet(const char *file, int line, const char *function, int err, const char *fmt, ...) {
    (void)file; (void)line; (void)function; (void)err; (void)fmt;
}

static void load_once(void) {
    static const char *const names[] = {KIOSK_ALSA_LIBRARY, NULL};
    void *h = kiosk_dlopen_first(names, NULL, load_error, sizeof load_error);
    if (!h) return;
#define FIND(name)                                                                       \
    alsa.name = (__typeof__(name) *)kiosk_dlsym(h, #name, load_error, sizeof load_error); \
    if (!alsa.name) { dlclose(h); return; }
    KIOSK_ALSA_FUNCTIONS(FIND)
#undef FIND
    alsa.snd_lib_error_set_handler(quiet);
    __atomic_store_n(&handle, h, __ATOMIC_RELEASE);
}

int kiosk_alsa_load(char *err, size_t errlen) {
    pthread_once(&once, load_once);
    if (__atomic_load_n(&handle, __ATOMIC_ACQUIRE)) return 0;
    if (err && errlen > 0) snprintf(err, errlen, "%s (install %s)", load_error, KIOSK_ALSA_PACKAGE);
    return -1;
}

const char *kiosk_alsa_version(void) {
    return __atomic_load_n(&handle, __ATOMIC_ACQUIRE) ? alsa.snd_asoundlib_version() : "";
}

kiosk_pcm *kiosk_pcm_open(const char *name, unsigned rate, unsigned latency_us, int *error, char *err, size_t errlen) {
    if (kiosk_alsa_load(err, errlen) != 0) {
        if (error) *error = -ENOSYS;
        return NULL;
    }
    snd_pcm_t *pcm = NULL;
    int e = alsa.snd_pcm_open(&pcm, name, SND_PCM_STREAM_PLAYBACK, SND_PCM_NONBLOCK);
    if (e == 0) e = alsa.snd_pcm_nonblock(pcm, 0);
    if (e == 0) e = alsa.snd_pcm_set_params(pcm, SND_PCM_FORMAT_S16_LE, SND_PCM_ACCESS_RW_INTERLEAVED, 1, rate, 1, latency_us);
    if (e < 0) {
        if (pcm) alsa.snd_pcm_close(pcm);
        if (error) *error = e;
        if (err && errlen > 0) snprintf(err, errlen, "%s", alsa.snd_strerror(e));
        return NULL;
    }
    kiosk_pcm *p = calloc(1, sizeof *p);
    if (!p) {
        alsa.snd_pcm_close(pcm);
        if (error) *error = -ENOMEM;
        if (err && errlen > 0) snprintf(err, errlen, "out of memory");
        return NULL;
    }
    p->pcm = pcm;
    if (error) *error = 0;
    return p;
}

long kiosk_pcm_write(kiosk_pcm *p, const int16_t *frames, unsigned long count) {
    snd_pcm_sframes_t n = alsa.snd_pcm_writei(p->pcm, frames, count);
    if (n == -EPIPE || n == -ESTRPIPE || n == -EINTR) {
        int e = alsa.snd_pcm_recover(p->pcm, (int)n, 1);
        if (e < 0) return e;
        n = alsa.snd_pcm_writei(p->pcm, frames, count);
    }
    return (long)n;
}

int kiosk_pcm_drop(kiosk_pcm *p) {
    int e = alsa.snd_pcm_drop(p->pcm);
    return e < 0 ? e : alsa.snd_pcm_prepare(p->pcm);
}

int kiosk_pcm_drain(kiosk_pcm *p) { return alsa.snd_pcm_drain(p->pcm); }

void kiosk_pcm_close(kiosk_pcm *p) {
    if (!p) return;
    alsa.snd_pcm_close(p->pcm);
    free(p);
}

const char *kiosk_alsa_strerror(int error) {
    return __atomic_load_n(&handle, __ATOMIC_ACQUIRE) ? alsa.snd_strerror(error) : strerror(-error);
}

int kiosk_alsa_cards(char *out, size_t outlen) {
    if (out && outlen > 0) out[0] = 0;
    if (kiosk_alsa_load(NULL, 0) != 0) return -ENOSYS;
    int card = -1, count = 0;
    size_t used = 0;
    while (alsa.snd_card_next(&card) == 0 && card >= 0) {
        char *name = NULL, *longname = NULL;
        alsa.snd_card_get_name(card, &name);
        alsa.snd_card_get_longname(card, &longname);
        if (out && used + 1 < outlen) {
            int n = snprintf(out + used, outlen - used, "%s%d %s (%s)", count ? "; " : "", card, name ? name : "?", longname ? longname : "?");
            if (n > 0) used += (size_t)n < outlen - used ? (size_t)n : outlen - used - 1;
        }
        free(name);
        free(longname);
        count++;
    }
    return count;
}
