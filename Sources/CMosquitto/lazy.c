// SPDX-License-Identifier: Apache-2.0
/*
 * libmosquitto on first use: trampolines with the mosquitto_* names and mosquitto.h's own
 * prototypes (the compiler checks each against the header), resolved with dlsym once, when the
 * library is first needed. No policy here: a failed load is reported, not decided on.
 */
#define _GNU_SOURCE
#include "shim.h"
#include "kiosk_dlopen.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static pthread_once_t once = PTHREAD_ONCE_INIT;
static void *handle;
static char why[256];

static void load_once(void) {
    static const char *const names[] = {KIOSK_MOSQUITTO_LIBRARY, NULL};
    handle = kiosk_dlopen_first(names, NULL, why, sizeof why);
}

int kiosk_mosquitto_load(char *err, size_t errlen) {
    pthread_once(&once, load_once);
    if (handle) return 0;
    kiosk_say(err, errlen, "%s", why);
    return -1;
}

int kiosk_mosquitto_loaded(void) {
    return __atomic_load_n(&handle, __ATOMIC_ACQUIRE) != NULL;
}

/* The real function, or NULL when the library or the symbol is missing. */
static void *resolve(const char *name) {
    pthread_once(&once, load_once);
    return handle ? kiosk_dlsym(handle, name, NULL, 0) : NULL;
}

#define FIND(name)                                                            \
    static __typeof__(&name) real;                                            \
    __typeof__(&name) fn = __atomic_load_n(&real, __ATOMIC_ACQUIRE);          \
    if (!fn) {                                                                \
        fn = (__typeof__(&name))resolve(#name);                               \
        __atomic_store_n(&real, fn, __ATOMIC_RELEASE);                        \
    }

/* A function returning a value: `fail` when libmosquitto cannot be had. */
#define RETURNING(ret, name, params, args, fail) \
    ret name params {                             \
        FIND(name)                                \
        if (!fn) return fail;                     \
        return fn args;                           \
    }

/* A function returning nothing: nothing happens when libmosquitto cannot be had. */
#define VOID(name, params, args) \
    void name params {            \
        FIND(name)                \
        if (fn) fn args;          \
    }

RETURNING(int, mosquitto_lib_version, (int *major, int *minor, int *revision), (major, minor, revision),
          (major ? (*major = 0) : 0, minor ? (*minor = 0) : 0, revision ? (*revision = 0) : 0, 0))
RETURNING(int, mosquitto_lib_init, (void), (), MOSQ_ERR_NOT_SUPPORTED)
RETURNING(int, mosquitto_lib_cleanup, (void), (), MOSQ_ERR_NOT_SUPPORTED)
RETURNING(struct mosquitto *, mosquitto_new, (const char *id, bool clean_session, void *obj), (id, clean_session, obj),
          (errno = ENOSYS, (struct mosquitto *)NULL))
VOID(mosquitto_destroy, (struct mosquitto *mosq), (mosq))
RETURNING(int, mosquitto_will_set, (struct mosquitto *mosq, const char *topic, int payloadlen, const void *payload, int qos, bool retain),
          (mosq, topic, payloadlen, payload, qos, retain), MOSQ_ERR_NOT_SUPPORTED)
RETURNING(int, mosquitto_username_pw_set, (struct mosquitto *mosq, const char *username, const char *password),
          (mosq, username, password), MOSQ_ERR_NOT_SUPPORTED)
RETURNING(int, mosquitto_connect, (struct mosquitto *mosq, const char *host, int port, int keepalive),
          (mosq, host, port, keepalive), MOSQ_ERR_NOT_SUPPORTED)
RETURNING(int, mosquitto_disconnect, (struct mosquitto *mosq), (mosq), MOSQ_ERR_NOT_SUPPORTED)
RETURNING(int, mosquitto_publish, (struct mosquitto *mosq, int *mid, const char *topic, int payloadlen, const void *payload, int qos, bool retain),
          (mosq, mid, topic, payloadlen, payload, qos, retain), MOSQ_ERR_NOT_SUPPORTED)
RETURNING(int, mosquitto_subscribe, (struct mosquitto *mosq, int *mid, const char *sub, int qos), (mosq, mid, sub, qos),
          MOSQ_ERR_NOT_SUPPORTED)
RETURNING(int, mosquitto_unsubscribe, (struct mosquitto *mosq, int *mid, const char *sub), (mosq, mid, sub), MOSQ_ERR_NOT_SUPPORTED)
RETURNING(int, mosquitto_loop, (struct mosquitto *mosq, int timeout, int max_packets), (mosq, timeout, max_packets),
          MOSQ_ERR_NOT_SUPPORTED)
RETURNING(int, mosquitto_socket, (struct mosquitto *mosq), (mosq), -1)
RETURNING(bool, mosquitto_want_write, (struct mosquitto *mosq), (mosq), false)
RETURNING(int, mosquitto_int_option, (struct mosquitto *mosq, enum mosq_opt_t option, int value), (mosq, option, value),
          MOSQ_ERR_NOT_SUPPORTED)
RETURNING(int, mosquitto_tls_set,
          (struct mosquitto *mosq, const char *cafile, const char *capath, const char *certfile, const char *keyfile,
           int (*pw_callback)(char *buf, int size, int rwflag, void *userdata)),
          (mosq, cafile, capath, certfile, keyfile, pw_callback), MOSQ_ERR_NOT_SUPPORTED)
RETURNING(int, mosquitto_tls_insecure_set, (struct mosquitto *mosq, bool value), (mosq, value), MOSQ_ERR_NOT_SUPPORTED)
VOID(mosquitto_connect_callback_set, (struct mosquitto *mosq, void (*on_connect)(struct mosquitto *, void *, int)), (mosq, on_connect))
VOID(mosquitto_disconnect_callback_set, (struct mosquitto *mosq, void (*on_disconnect)(struct mosquitto *, void *, int)),
     (mosq, on_disconnect))
VOID(mosquitto_publish_callback_set, (struct mosquitto *mosq, void (*on_publish)(struct mosquitto *, void *, int)), (mosq, on_publish))
VOID(mosquitto_message_callback_set,
     (struct mosquitto *mosq, void (*on_message)(struct mosquitto *, void *, const struct mosquitto_message *)), (mosq, on_message))
VOID(mosquitto_subscribe_callback_set,
     (struct mosquitto *mosq, void (*on_subscribe)(struct mosquitto *, void *, int, int, const int *)), (mosq, on_subscribe))
VOID(mosquitto_unsubscribe_callback_set, (struct mosquitto *mosq, void (*on_unsubscribe)(struct mosquitto *, void *, int)),
     (mosq, on_unsubscribe))
VOID(mosquitto_log_callback_set, (struct mosquitto *mosq, void (*on_log)(struct mosquitto *, void *, int, const char *)), (mosq, on_log))
RETURNING(const char *, mosquitto_strerror, (int mosq_errno), (mosq_errno), "libmosquitto is not loaded")
