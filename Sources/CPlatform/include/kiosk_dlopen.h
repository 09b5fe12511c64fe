// SPDX-License-Identifier: Apache-2.0
/*
 * The one way the C shims load a library on first use (libcrypto, libical, libmosquitto, the
 * libcamera plugin): open the first of a list of names, look its symbols up, and say what is
 * missing in dlerror's own words; and the shims' one way to say what failed into the caller's
 * error buffer (kiosk_say). Which library and which version each shim talks to stays in that
 * shim: this file knows no library's name.
 */
#ifndef KIOSK_DLOPEN_H
#define KIOSK_DLOPEN_H

#include <dlfcn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

/* printf's `fmt` into the caller's error buffer `buf` of `len` bytes (cut short and always
 * NUL-terminated); nothing when buf is NULL or len is 0 (the caller wants no text). */
static inline void kiosk_say(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static inline void kiosk_say(char *buf, size_t len, const char *fmt, ...) {
    if (!buf || len == 0) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, len, fmt, ap);
    va_end(ap);
}

/* Opens the first of `names` (NULL-terminated, in the order of preference) that dlopen takes
 * (RTLD_NOW | RTLD_LOCAL): its handle, and in *opened (when opened is not NULL) the name it took.
 * NULL when none loads, with dlerror's text of every attempt in `why` ("; " between them; always
 * NUL-terminated when whylen > 0). */
static inline void *kiosk_dlopen_first(const char *const names[], const char **opened, char *why, size_t whylen) {
    size_t used = 0;
    if (why && whylen > 0) why[0] = 0;
    for (size_t i = 0; names && names[i]; i++) {
        dlerror();
        void *handle = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (handle) {
            if (opened) *opened = names[i];
            return handle;
        }
        const char *e = dlerror();
        if (why && used + 1 < whylen) {
            int n = snprintf(why + used, whylen - used, "%s%s", used ? "; " : "", e ? e : names[i]);
            if (n > 0) used += (size_t)n < whylen - used ? (size_t)n : whylen - used - 1;
        }
    }
    if (why && whylen > 0 && !why[0]) snprintf(why, whylen, "no library to open");
    return NULL;
}

/* The address of `name` in `handle`, or NULL with dlerror's text in `why` ("libcrypto.so.3:
 * undefined symbol: EVP_Digest"; always NUL-terminated when whylen > 0). */
static inline void *kiosk_dlsym(void *handle, const char *name, char *why, size_t whylen) {
    dlerror();
    void *address = dlsym(handle, name);
    if (!address && why && whylen > 0) {
        const char *e = dlerror();
        snprintf(why, whylen, "%s", e ? e : name);
    }
    return address;
}

/* Opens the first of `names` and looks up each of `symbols` (`count` of them) into `slots`, in
 * order: the handle, or NULL with what failed in `why` (a library missing, or one of its symbols,
 * when the library is closed again). */
static inline void *kiosk_dlopen_symbols(const char *const names[], const char *const symbols[], void **slots, size_t count,
                                         char *why, size_t whylen) {
    void *handle = kiosk_dlopen_first(names, NULL, why, whylen);
    for (size_t i = 0; handle && i < count; i++) {
        if (!(slots[i] = kiosk_dlsym(handle, symbols[i], why, whylen))) {
            dlclose(handle);
            handle = NULL;
        }
    }
    return handle;
}

#endif
