// SPDX-License-Identifier: Apache-2.0
/*
 * libmosquitto (Debian libmosquitto-dev, runtime libmosquitto1), the MQTT client library: its plain
 * C API, as it is, with the library loaded on first use (issue 23). Nothing links libmosquitto:
 * each mosquitto_* function the kiosk calls is defined in lazy.c under its own name, and calls the
 * real one, found with dlopen("libmosquitto.so.1") and dlsym the first time any is called. An idle
 * kiosk without KIOSK_MQTT_URL never maps libmosquitto, nor the libssl and libcrypto it pulls in.
 * The types and constants are mosquitto.h's own, so the Swift side is unchanged.
 */
#ifndef KIOSK_CMOSQUITTO_SHIM_H
#define KIOSK_CMOSQUITTO_SHIM_H

#include <mosquitto.h>
#include <stddef.h>

/// The file dlopen'd, and the Debian package that ships it (the same on bookworm and trixie).
#define KIOSK_MOSQUITTO_LIBRARY "libmosquitto.so.1"
#define KIOSK_MOSQUITTO_PACKAGE "libmosquitto1"

/// Loads libmosquitto now (once a process; later calls say the same): 0, or -1 with why in `err`
/// (always NUL-terminated when errlen > 0). Every mosquitto_* function loads it too; when that
/// fails, each returns its own failure (MOSQ_ERR_NOT_SUPPORTED, NULL, false, "...not loaded").
int kiosk_mosquitto_load(char *err, size_t errlen);

/// Whether libmosquitto is loaded, without loading it.
int kiosk_mosquitto_loaded(void);

#endif
