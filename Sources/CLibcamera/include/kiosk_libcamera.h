// SPDX-License-Identifier: Apache-2.0
/*
 * The kiosk's libcamera plugin, seen from both sides.
 *
 * libcamera's soname changes with every minor release, and Raspberry Pi OS ships its own build, so
 * the kiosk never links libcamera. A small C++ plugin (plugins/libcamera/, built against the
 * libcamera of the machine it runs on, without Swift) exports the kiosk_lcp_* functions below; the
 * kiosk dlopen()s it only when KIOSK_CAMERA=libcamera... and calls it through kiosk_lc_* (loader.c).
 *
 * Threading: one handle is used by one thread at a time (the frame loop). The plugin's own
 * libcamera thread completes requests; kiosk_lcp_next() waits for them.
 */
#ifndef KIOSK_LIBCAMERA_H
#define KIOSK_LIBCAMERA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped when a struct or a signature below changes; the loader refuses another plugin's. */
#define KIOSK_LC_ABI 2

/* A rectangle in sensor pixels (libcamera's Rectangle). */
struct kiosk_lc_rect {
    int32_t x, y;
    int32_t width, height;
};

/* The kinds of control value the kiosk and the plugin exchange. */
#define KIOSK_LC_OTHER 0       /* bool, string, size, point...: advertised, never set by the kiosk */
#define KIOSK_LC_INT 1         /* an integer control (enums included: their int32 values) */
#define KIOSK_LC_FLOAT 2
#define KIOSK_LC_RECTANGLES 3  /* a Rectangle or an array of them (AfWindows) */

/* A control the camera advertises (its ControlInfoMap): min, max and def as numbers for the
 * numeric kinds (an enum as its int range); for rectangles and others the type alone. */
struct kiosk_lc_control_offer {
    char name[32];      /* libcamera's name, e.g. "LensPosition" */
    int32_t type;       /* KIOSK_LC_* */
    int32_t numeric;    /* 1: min, max (and def when has_def) below are the control's */
    double min, max, def;
    int32_t has_def;
};

/* One control to set, by libcamera's name: at start (kiosk_lcp_start) or with each request
 * (kiosk_lcp_set_controls). A name the camera does not advertise, or a type that is not the
 * control's, is an error naming it. */
struct kiosk_lc_control {
    char name[32];
    int32_t type;       /* KIOSK_LC_INT, KIOSK_LC_FLOAT or KIOSK_LC_RECTANGLES */
    int32_t i;          /* KIOSK_LC_INT */
    float f;            /* KIOSK_LC_FLOAT */
    int32_t count;      /* KIOSK_LC_RECTANGLES: how many of rects (1-4) */
    struct kiosk_lc_rect rects[4];
};

#define KIOSK_LC_MAX_OFFERS 64

/* What was negotiated, filled by open. */
struct kiosk_lc_info {
    char id[256];          /* the camera's id, as `cam --list` prints it */
    char model[64];        /* properties::Model, or "" */
    char format[16];       /* the stream's pixel format, e.g. "YUV420", "NV12", "BGR888" */
    int32_t width, height; /* the stream's size (may differ from the one asked for) */
    double fps;            /* the frame rate asked for, or 0 when the camera could not be told */
    /* ScalerCrop: whether the camera can crop on the sensor, and the largest crop
     * (properties::ScalerCropMaximum, in sensor pixels), known after configure. */
    int32_t has_scaler_crop;
    struct kiosk_lc_rect crop_maximum;
    /* The controls the camera advertises (Camera::controls()), by rising id: libcamera's own
     * (Af*, Ae*, LensPosition...) before vendors' (rpi::...). Those beyond KIOSK_LC_MAX_OFFERS,
     * or with a name of 32 bytes or more, are left out and counted in offers_left_out. */
    int32_t offer_count;
    int32_t offers_left_out;
    struct kiosk_lc_control_offer offers[KIOSK_LC_MAX_OFFERS];
};

/* One completed request's frame. The luma bytes stay valid (and CPU-synced) until the next call
 * to kiosk_lcp_next or kiosk_lcp_close on the handle; then the request is queued again. */
struct kiosk_lc_frame {
    const uint8_t *luma;      /* first luma (or green) sample of the first row */
    int32_t width, height;    /* in samples */
    int32_t row_stride;       /* bytes from one row to the next */
    int32_t pixel_stride;     /* bytes from one sample to the next (1 for Y planes, 3 for BGR888) */
    uint64_t sequence;        /* the frame's sequence number from the pipeline */
    uint64_t timestamp_ns;    /* the sensor timestamp (metadata SensorTimestamp, else the buffer's) */
    /* Metadata of the request, each with a flag saying whether it was there. */
    int32_t has_exposure;  double exposure_us;    /* ExposureTime */
    int32_t has_gain;      double analogue_gain;  /* AnalogueGain */
    int32_t has_lux;       double lux;            /* Lux (Raspberry Pi's IPA) */
    int32_t has_crop;      struct kiosk_lc_rect crop; /* ScalerCrop the pipeline applied */
    int32_t has_lens_position; float lens_position;   /* LensPosition, dioptres */
    int32_t has_af_state;  int32_t af_state;          /* AfState: 0 idle, 1 scanning, 2 focused, 3 failed */
    int32_t has_focus_fom; int32_t focus_fom;         /* FocusFoM: larger is sharper (same scene) */
};

/* Results of kiosk_lcp_next. */
#define KIOSK_LC_FRAME 1
#define KIOSK_LC_TIMEOUT 0
#define KIOSK_LC_ERROR (-1)

/* Results of kiosk_lcp_close. */
#define KIOSK_LC_CLOSED 0
/* The camera could not be stopped safely (it stopped delivering: libcamera's Camera::stop()
 * asserts then): it was abandoned, not stopped. The process must exit for the camera to be
 * usable again (the kiosk exits 69 and systemd restarts it). */
#define KIOSK_LC_ABANDONED 1

typedef struct kiosk_lc kiosk_lc;

/* ---- What the plugin exports (plugins/libcamera/kiosk_libcamera.cpp) ---- */

/* KIOSK_LC_ABI as the plugin was built. */
int kiosk_lcp_abi(void);
/* The libcamera version the plugin runs against, e.g. "0.0.3" or "v0.5.2+rpt20250903". */
const char *kiosk_lcp_version(void);
/* The cameras libcamera lists, one id per line, into buf (NUL-terminated, truncated to len).
 * Returns the number of cameras, or -1 with a message in buf. */
int kiosk_lcp_list(char *buf, size_t len);
/* Opens a camera: "" for the first one, an id, or a decimal index into the list. Acquires it,
 * configures one viewfinder stream at about width x height with a luma or green plane and
 * allocates its buffers; info says what was negotiated and which controls the camera has. It
 * does not start the camera (kiosk_lcp_start does, with the controls chosen from info). NULL and
 * a message in err on failure. */
kiosk_lc *kiosk_lcp_open(const char *camera, int32_t width, int32_t height, double fps,
                         struct kiosk_lc_info *info, char *err, size_t errlen);
/* Starts an open camera with controls (count of them, 0 for none) in Camera::start()'s list,
 * beside the frame duration for open's fps, and queues its requests. 0, or -1 and a message (a
 * control the camera lacks or of another type, named; libcamera's error): then only
 * kiosk_lcp_close. */
int kiosk_lcp_start(kiosk_lc *cam, const struct kiosk_lc_control *controls, int32_t count, char *err, size_t errlen);
/* Controls to give with every request queued from now on, replacing those of an earlier call
 * (count 0: none). Checked as kiosk_lcp_start checks them: 0, or -1 and a message, the earlier
 * list then kept. */
int kiosk_lcp_set_controls(kiosk_lc *cam, const struct kiosk_lc_control *controls, int32_t count, char *err,
                           size_t errlen);
/* ScalerCrop for the requests queued from now on (x, y, width, height in sensor pixels, within
 * info.crop_maximum). 0, or -1 and a message when the camera cannot crop. */
int kiosk_lcp_set_crop(kiosk_lc *cam, struct kiosk_lc_rect crop, char *err, size_t errlen);
/* Waits up to timeout_ms for the next completed request of a started camera. The previous frame
 * is given back first.
 * KIOSK_LC_FRAME, KIOSK_LC_TIMEOUT, or KIOSK_LC_ERROR and a message in err (the request failed,
 * the camera was disconnected). */
int kiosk_lcp_next(kiosk_lc *cam, int32_t timeout_ms, struct kiosk_lc_frame *frame, char *err, size_t errlen);
/* Stops and releases the camera and the manager. stalled != 0 says no request completed for a
 * while (the kiosk's camera_lost): the plugin must then not call Camera::stop(). Returns
 * KIOSK_LC_CLOSED or KIOSK_LC_ABANDONED. */
int kiosk_lcp_close(kiosk_lc *cam, int stalled);

/* ---- What the kiosk calls (loader.c): the same, through dlopen ---- */

/* Loads the plugin from path. 0, or -1 and why (not found, dlopen's message, an ABI mismatch,
 * a missing symbol) in err. Loading twice is harmless; the first success stays. */
int kiosk_lc_load(const char *path, char *err, size_t errlen);
int kiosk_lc_loaded(void);
const char *kiosk_lc_version(void);
int kiosk_lc_list(char *buf, size_t len);
kiosk_lc *kiosk_lc_open(const char *camera, int32_t width, int32_t height, double fps,
                        struct kiosk_lc_info *info, char *err, size_t errlen);
int kiosk_lc_start(kiosk_lc *cam, const struct kiosk_lc_control *controls, int32_t count, char *err, size_t errlen);
int kiosk_lc_set_controls(kiosk_lc *cam, const struct kiosk_lc_control *controls, int32_t count, char *err,
                          size_t errlen);
int kiosk_lc_set_crop(kiosk_lc *cam, struct kiosk_lc_rect crop, char *err, size_t errlen);
int kiosk_lc_next(kiosk_lc *cam, int32_t timeout_ms, struct kiosk_lc_frame *frame, char *err, size_t errlen);
int kiosk_lc_close(kiosk_lc *cam, int stalled);

#ifdef __cplusplus
}
#endif

#endif
