// SPDX-License-Identifier: Apache-2.0
/* Loads the kiosk's libcamera plugin with dlopen and calls it: libcamera is never linked into the
 * kiosk (its soname changes with every minor release). See include/kiosk_libcamera.h. */
#include "kiosk_libcamera.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    int (*abi)(void);
    const char *(*version)(void);
    int (*list)(char *, size_t);
    kiosk_lc *(*open)(const char *, int32_t, int32_t, double, struct kiosk_lc_info *, char *, size_t);
    int (*set_crop)(kiosk_lc *, struct kiosk_lc_rect, char *, size_t);
    int (*next)(kiosk_lc *, int32_t, struct kiosk_lc_frame *, char *, size_t);
    int (*close)(kiosk_lc *, int);
} plugin;
static int loaded;

static void say(char *err, size_t len, const char *what, const char *detail) {
    if (err && len) snprintf(err, len, "%s%s%s", what, detail ? ": " : "", detail ? detail : "");
}

int kiosk_lc_load(const char *path, char *err, size_t errlen) {
    pthread_mutex_lock(&lock);
    if (loaded) { pthread_mutex_unlock(&lock); return 0; }
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        say(err, errlen, dlerror(), NULL);
        pthread_mutex_unlock(&lock);
        return -1;
    }
#define SYM(field, name)                                                 \
    do {                                                                 \
        *(void **)(&plugin.field) = dlsym(h, name);                      \
        if (!plugin.field) { say(err, errlen, path, "no " name); goto fail; } \
    } while (0)
    SYM(abi, "kiosk_lcp_abi");
    SYM(version, "kiosk_lcp_version");
    SYM(list, "kiosk_lcp_list");
    SYM(open, "kiosk_lcp_open");
    SYM(set_crop, "kiosk_lcp_set_crop");
    SYM(next, "kiosk_lcp_next");
    SYM(close, "kiosk_lcp_close");
#undef SYM
    if (plugin.abi() != KIOSK_LC_ABI) {
        if (err && errlen)
            snprintf(err, errlen, "%s: plugin ABI %d, the kiosk needs %d (rebuild the plugin from this kiosk's sources)",
                     path, plugin.abi(), KIOSK_LC_ABI);
        goto fail;
    }
    loaded = 1;
    pthread_mutex_unlock(&lock);
    return 0;
fail:
    dlclose(h);
    pthread_mutex_unlock(&lock);
    return -1;
}

int kiosk_lc_loaded(void) { return loaded; }

const char *kiosk_lc_version(void) { return loaded ? plugin.version() : ""; }

int kiosk_lc_list(char *buf, size_t len) {
    if (!loaded) { say(buf, len, "the libcamera plugin is not loaded", NULL); return -1; }
    return plugin.list(buf, len);
}

kiosk_lc *kiosk_lc_open(const char *camera, int32_t width, int32_t height, double fps,
                        struct kiosk_lc_info *info, char *err, size_t errlen) {
    if (!loaded) { say(err, errlen, "the libcamera plugin is not loaded", NULL); return NULL; }
    return plugin.open(camera, width, height, fps, info, err, errlen);
}

int kiosk_lc_set_crop(kiosk_lc *cam, struct kiosk_lc_rect crop, char *err, size_t errlen) {
    if (!loaded || !cam) { say(err, errlen, "no libcamera camera is open", NULL); return -1; }
    return plugin.set_crop(cam, crop, err, errlen);
}

int kiosk_lc_next(kiosk_lc *cam, int32_t timeout_ms, struct kiosk_lc_frame *frame, char *err, size_t errlen) {
    if (!loaded || !cam) { say(err, errlen, "no libcamera camera is open", NULL); return KIOSK_LC_ERROR; }
    return plugin.next(cam, timeout_ms, frame, err, errlen);
}

int kiosk_lc_close(kiosk_lc *cam, int stalled) {
    if (!loaded || !cam) return KIOSK_LC_CLOSED;
    return plugin.close(cam, stalled);
}
