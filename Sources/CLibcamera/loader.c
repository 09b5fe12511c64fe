// SPDX-License-Identifier: Apache-2.0
/*
 * The kiosk's side of the libcamera plugin: dlopen() it, check its ABI, find its functions, call
 * through them. No libcamera here: the plugin is the only thing that links it.
 */
#define _GNU_SOURCE
#include "kiosk_libcamera.h"
#include "kiosk_dlopen.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static struct {
    void *handle;
    int (*abi)(void);
    const char *(*version)(void);
    int (*list)(char *, size_t);
    kiosk_lc *(*open)(const char *, int32_t, int32_t, double, struct kiosk_lc_info *, char *, size_t);
    int (*start)(kiosk_lc *, const struct kiosk_lc_control *, int32_t, char *, size_t);
    int (*set_controls)(kiosk_lc *, const struct kiosk_lc_control *, int32_t, char *, size_t);
    int (*set_crop)(kiosk_lc *, struct kiosk_lc_rect, char *, size_t);
    int (*next)(kiosk_lc *, int32_t, struct kiosk_lc_frame *, char *, size_t);
    int (*close)(kiosk_lc *, int);
} plugin;
static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;

static const char not_loaded[] = "the libcamera plugin is not loaded";

int kiosk_lc_load(const char *path, char *err, size_t errlen) {
    pthread_mutex_lock(&load_lock);
    if (plugin.handle) {
        pthread_mutex_unlock(&load_lock);
        return 0;
    }
    struct stat st;
    if (!path || !*path || stat(path, &st) != 0) {
        kiosk_say(err, errlen, "no libcamera plugin at %s", path && *path ? path : "(no path)");
        pthread_mutex_unlock(&load_lock);
        return -1;
    }
    const char *const names[] = {path, NULL};
    char why[200];
    void *h = kiosk_dlopen_first(names, NULL, why, sizeof why);
    if (!h) {
        kiosk_say(err, errlen, "dlopen %s: %s", path, why);
        pthread_mutex_unlock(&load_lock);
        return -1;
    }
    int (*abi)(void) = (int (*)(void))kiosk_dlsym(h, "kiosk_lcp_abi", NULL, 0);
    if (!abi) {
        kiosk_say(err, errlen, "%s is not a kiosk libcamera plugin (no kiosk_lcp_abi)", path);
        goto fail;
    }
    if (abi() != KIOSK_LC_ABI) {
        kiosk_say(err, errlen, "%s has plugin ABI %d, this kiosk needs %d: rebuild the plugin from this kiosk's source",
            path, abi(), KIOSK_LC_ABI);
        goto fail;
    }
#define FIND(field, name)                                                            \
    do {                                                                             \
        *(void **)&plugin.field = kiosk_dlsym(h, name, why, sizeof why);             \
        if (!plugin.field) {                                                         \
            kiosk_say(err, errlen, "the libcamera plugin lacks a function: %s", why); \
            goto fail;                                                               \
        }                                                                            \
    } while (0)
    FIND(version, "kiosk_lcp_version");
    FIND(list, "kiosk_lcp_list");
    FIND(open, "kiosk_lcp_open");
    FIND(start, "kiosk_lcp_start");
    FIND(set_controls, "kiosk_lcp_set_controls");
    FIND(set_crop, "kiosk_lcp_set_crop");
    FIND(next, "kiosk_lcp_next");
    FIND(close, "kiosk_lcp_close");
#undef FIND
    plugin.abi = abi;
    plugin.handle = h;
    pthread_mutex_unlock(&load_lock);
    return 0;
fail:
    memset(&plugin, 0, sizeof plugin);
    dlclose(h);
    pthread_mutex_unlock(&load_lock);
    return -1;
}

int kiosk_lc_loaded(void) {
    pthread_mutex_lock(&load_lock);
    int loaded = plugin.handle != NULL;
    pthread_mutex_unlock(&load_lock);
    return loaded;
}

/* After a successful load the pointers never change again: the calls below read them unlocked. */
const char *kiosk_lc_version(void) { return plugin.handle ? plugin.version() : NULL; }

int kiosk_lc_list(char *buf, size_t len) {
    if (!plugin.handle) {
        kiosk_say(buf, len, "%s", not_loaded);
        return -1;
    }
    return plugin.list(buf, len);
}

kiosk_lc *kiosk_lc_open(const char *camera, int32_t width, int32_t height, double fps, struct kiosk_lc_info *info,
                        char *err, size_t errlen) {
    if (!plugin.handle) {
        kiosk_say(err, errlen, "%s", not_loaded);
        return NULL;
    }
    return plugin.open(camera ? camera : "", width, height, fps, info, err, errlen);
}

int kiosk_lc_start(kiosk_lc *cam, const struct kiosk_lc_control *controls, int32_t count, char *err, size_t errlen) {
    if (!plugin.handle) {
        kiosk_say(err, errlen, "%s", not_loaded);
        return -1;
    }
    return plugin.start(cam, controls, count, err, errlen);
}

int kiosk_lc_set_controls(kiosk_lc *cam, const struct kiosk_lc_control *controls, int32_t count, char *err,
                          size_t errlen) {
    if (!plugin.handle) {
        kiosk_say(err, errlen, "%s", not_loaded);
        return -1;
    }
    return plugin.set_controls(cam, controls, count, err, errlen);
}

int kiosk_lc_set_crop(kiosk_lc *cam, struct kiosk_lc_rect crop, char *err, size_t errlen) {
    if (!plugin.handle) {
        kiosk_say(err, errlen, "%s", not_loaded);
        return -1;
    }
    return plugin.set_crop(cam, crop, err, errlen);
}

int kiosk_lc_next(kiosk_lc *cam, int32_t timeout_ms, struct kiosk_lc_frame *frame, char *err, size_t errlen) {
    if (!plugin.handle) {
        kiosk_say(err, errlen, "%s", not_loaded);
        return KIOSK_LC_ERROR;
    }
    return plugin.next(cam, timeout_ms, frame, err, errlen);
}

int kiosk_lc_close(kiosk_lc *cam, int stalled) {
    if (!plugin.handle) return KIOSK_LC_CLOSED;
    return plugin.close(cam, stalled);
}
