// SPDX-License-Identifier: Apache-2.0
/*
 * ALSA's libasound (Debian libasound2-dev; runtime libasound2 on bookworm, libasound2t64 on
 * trixie, the same soname), loaded on first use: a kiosk without KIOSK_SPEAKER never maps it.
 * A playback PCM of any name (`default`, `plughw:CARD=Device`, one of /etc/asound.conf or
 * ~/.asoundrc), mono signed 16-bit samples. snd_pcm_open's flags, the format and access enums
 * and ALSA's variadic error handler stay here; Swift sees plain calls that return 0 or a
 * negative errno. No policy here: a failure is reported, not decided on.
 */
#ifndef KIOSK_ALSA_H
#define KIOSK_ALSA_H

#include <stddef.h>
#include <stdint.h>

/// The file dlopen'd, and the Debian package that ships it on bookworm.
#define KIOSK_ALSA_LIBRARY "libasound.so.2"
#define KIOSK_ALSA_PACKAGE "libasound2"

/// Loads libasound now (once a process): 0, or -1 with why in `err` (always NUL-terminated when
/// errlen > 0). ALSA's own messages on stderr are silenced: the kiosk says what failed in its log.
int kiosk_alsa_load(char *err, size_t errlen);

/// libasound's version ("1.2.8"), or "" when it is not loaded.
const char *kiosk_alsa_version(void);

typedef struct kiosk_pcm kiosk_pcm;

/// Opens `name` for playback of `rate` Hz mono S16 samples, `latency_us` of buffer, resampled by
/// ALSA when the device wants another rate. Never waits for a device another program holds
/// (opened non-blocking, then made blocking for the writes). NULL with a negative errno in *error
/// and ALSA's words in `err`.
kiosk_pcm *kiosk_pcm_open(const char *name, unsigned rate, unsigned latency_us, int *error, char *err, size_t errlen);

/// Writes up to `count` frames, waiting for room (the caller's own thread); an underrun is
/// recovered from and the write tried once more. The frames written, or a negative errno
/// (-ENODEV: the device went away).
long kiosk_pcm_write(kiosk_pcm *pcm, const int16_t *frames, unsigned long count);

/// Drops what is queued at once (a phrase cut by the next) and makes the PCM ready again.
int kiosk_pcm_drop(kiosk_pcm *pcm);

/// Waits until what is queued has played.
int kiosk_pcm_drain(kiosk_pcm *pcm);

void kiosk_pcm_close(kiosk_pcm *pcm);

/// ALSA's text for a negative error code.
const char *kiosk_alsa_strerror(int error);

/// The sound cards ALSA sees, as `aplay -l` names them: "0 Headphones (bcm2835 Headphones); 1 ..."
/// into `out` (always NUL-terminated when outlen > 0). The number of cards, or a negative errno.
int kiosk_alsa_cards(char *out, size_t outlen);

#endif
