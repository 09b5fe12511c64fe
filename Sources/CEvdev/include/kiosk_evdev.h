// SPDX-License-Identifier: Apache-2.0
/*
 * libevdev (Debian libevdev-dev, runtime libevdev2), loaded on first use: a keypad or keyboard's
 * input-event device opened, grabbed (its keys go to no one else: not the console, not a login
 * prompt) and its key events read. No policy: which key is which is the Swift side's.
 *
 * Results: 0 or a count on success, a negative errno on failure (-ENODEV: the device is gone).
 */
#ifndef KIOSK_EVDEV_H
#define KIOSK_EVDEV_H

#include <stddef.h>
#include <stdint.h>

#define KIOSK_EVDEV_LIBRARY "libevdev.so.2"
#define KIOSK_EVDEV_PACKAGE "libevdev2"

typedef struct kiosk_evdev kiosk_evdev;

/* Loads libevdev (once; thread-safe): 0, or -1 with why in err. */
int kiosk_evdev_load(char *err, size_t errlen);

/* Opens `path` (non-blocking, close-on-exec) and grabs it: the device, or NULL with why in err
 * and the errno in *error (ENOENT: not plugged in; EACCES: not in the `input` group; EBUSY:
 * grabbed by another program). */
kiosk_evdev *kiosk_evdev_open(const char *path, int *error, char *err, size_t errlen);
/* Readable (poll(2)) when events wait. */
int kiosk_evdev_fd(const kiosk_evdev *dev);
/* The device's name as its driver gives it ("" when none). */
const char *kiosk_evdev_name(const kiosk_evdev *dev);
/* Whether the device has any key of the keypad's (a digit, Enter, Esc): 1 or 0. */
int kiosk_evdev_has_keys(const kiosk_evdev *dev);
/* The next key event: 1 with its code, value (1 down, 0 up, 2 repeat) and time (CLOCK_MONOTONIC
 * ns, when the kernel stamps so; else its own clock) filled; 0 when none waits; -errno on failure
 * (-ENODEV: unplugged). Events of other types, and a SYN_DROPPED resync, are passed over. */
int kiosk_evdev_next_key(kiosk_evdev *dev, unsigned int *code, int *value, uint64_t *time_ns);
/* Lets go of the grab, frees the device and closes its descriptor. NULL is ignored. */
void kiosk_evdev_close(kiosk_evdev *dev);

#endif
