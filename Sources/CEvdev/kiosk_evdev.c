// SPDX-License-Identifier: Apache-2.0
/*
 * libevdev (1.13 on bookworm and trixie), dlopen()ed on first use: libevdev.h gives the types,
 * every call goes through a pointer found by dlsym, so a kiosk without KIOSK_KEYPAD=evdev:... never
 * maps it. Only this file knows libevdev's API.
 */
#define _GNU_SOURCE
#include "kiosk_evdev.h"
#include "kiosk_dlopen.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>

#include <libevdev-1.0/libevdev/libevdev.h>

#define KIOSK_EVDEV_FUNCTIONS(X) \
    X(libevdev_new_from_fd) X(libevdev_free) X(libevdev_grab) X(libevdev_next_event) \
    X(libevdev_get_name) X(libevdev_has_event_code)

/* The functions found by dlsym, each under its own type (slot i of `symbols`). */
#define DECLARE(name) __typeof__(name) *name;
#define NAME(name) #name,
static union {
    struct { KIOSK_EVDEV_FUNCTIONS(DECLARE) } f;
    void *slot[sizeof(struct { KIOSK_EVDEV_FUNCTIONS(DECLARE) }) / sizeof(void *)];
} lib;
static const char *const symbols[] = {KIOSK_EVDEV_FUNCTIONS(NAME)};
#undef NAME
#undef DECLARE

static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;
static void *handle;
static char why[256];

int kiosk_evdev_load(char *err, size_t errlen) {
    pthread_mutex_lock(&load_lock);
    static const char *const names[] = {KIOSK_EVDEV_LIBRARY, NULL};
    if (!handle && !why[0]) handle = kiosk_dlopen_symbols(names, symbols, lib.slot, sizeof symbols / sizeof symbols[0], why, sizeof why);
    int rc = handle ? 0 : -1;
    if (rc) kiosk_say(err, errlen, "%s", why);
    pthread_mutex_unlock(&load_lock);
    return rc;
}

struct kiosk_evdev {
    int fd;
    struct libevdev *dev;
    int syncing;
};

kiosk_evdev *kiosk_evdev_open(const char *path, int *error, char *err, size_t errlen) {
    *error = 0;
    if (kiosk_evdev_load(err, errlen) != 0) { *error = ELIBACC; return NULL; }
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        *error = errno;
        kiosk_say(err, errlen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    /* Stamped on CLOCK_MONOTONIC, as the GPIO lines' edges are: one clock for the door. */
    int clock = CLOCK_MONOTONIC;
    (void)ioctl(fd, EVIOCSCLOCKID, &clock);
    struct libevdev *dev = NULL;
    int rc = lib.f.libevdev_new_from_fd(fd, &dev);
    if (rc < 0) {
        *error = -rc;
        kiosk_say(err, errlen, "%s: not an input-event device (%s)", path, strerror(-rc));
        close(fd);
        return NULL;
    }
    rc = lib.f.libevdev_grab(dev, LIBEVDEV_GRAB);
    if (rc < 0) {
        *error = -rc;
        kiosk_say(err, errlen, "%s: cannot grab it (%s): another program holds it", path, strerror(-rc));
        lib.f.libevdev_free(dev);
        close(fd);
        return NULL;
    }
    kiosk_evdev *k = calloc(1, sizeof *k);
    if (!k) {
        *error = ENOMEM;
        kiosk_say(err, errlen, "out of memory");
        lib.f.libevdev_grab(dev, LIBEVDEV_UNGRAB);
        lib.f.libevdev_free(dev);
        close(fd);
        return NULL;
    }
    k->fd = fd;
    k->dev = dev;
    return k;
}

int kiosk_evdev_fd(const kiosk_evdev *dev) { return dev->fd; }

const char *kiosk_evdev_name(const kiosk_evdev *dev) {
    const char *name = lib.f.libevdev_get_name(dev->dev);
    return name ? name : "";
}

int kiosk_evdev_has_keys(const kiosk_evdev *dev) {
    static const unsigned int keys[] = {KEY_0, KEY_1, KEY_KP0, KEY_KP1, KEY_ENTER, KEY_KPENTER, KEY_NUMERIC_0, KEY_NUMERIC_1};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        if (lib.f.libevdev_has_event_code(dev->dev, EV_KEY, keys[i])) return 1;
    }
    return 0;
}

int kiosk_evdev_next_key(kiosk_evdev *dev, unsigned int *code, int *value, uint64_t *time_ns) {
    for (;;) {
        struct input_event ev;
        int rc = lib.f.libevdev_next_event(dev->dev, dev->syncing ? LIBEVDEV_READ_FLAG_SYNC : LIBEVDEV_READ_FLAG_NORMAL, &ev);
        if (rc == -EAGAIN) {
            if (dev->syncing) { dev->syncing = 0; continue; }
            return 0;
        }
        if (rc < 0) return rc;
        /* Events were dropped: the device's state is replayed in sync mode (presses that were
         * lost stay lost; the PIN's entry then fails rather than guess). */
        if (rc == LIBEVDEV_READ_STATUS_SYNC) { dev->syncing = 1; continue; }
        if (ev.type != EV_KEY) continue;
        *code = ev.code;
        *value = ev.value;
        *time_ns = (uint64_t)ev.input_event_sec * 1000000000u + (uint64_t)ev.input_event_usec * 1000u;
        return 1;
    }
}

void kiosk_evdev_close(kiosk_evdev *dev) {
    if (!dev) return;
    lib.f.libevdev_grab(dev->dev, LIBEVDEV_UNGRAB);
    lib.f.libevdev_free(dev->dev);
    close(dev->fd);
    free(dev);
}
