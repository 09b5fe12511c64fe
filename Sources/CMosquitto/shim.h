// SPDX-License-Identifier: Apache-2.0
/* libmosquitto (Debian libmosquitto-dev), the MQTT client library: its plain C API, as it is. */
#include <mosquitto.h>
