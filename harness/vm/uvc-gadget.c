// SPDX-License-Identifier: Apache-2.0
/* uvc-gadget: the webcam behind the VM's UVC gadget (group uvc in guest-tests.sh). The kernel's
 * UVC function (usb_f_uvc, configured through configfs by the guest script, over dummy_hcd) hands
 * every class request the host's uvcvideo sends to this program as V4L2 events on the gadget's
 * video node; it answers them as a Logitech C920-like camera would, and streams frames of a
 * picture blurred by how far its focus is from SHARP: a lens.
 *
 *   uvc-gadget DEVICE LOG PICTURE SHARP [reset-focus-auto]
 *
 * DEVICE   the gadget's video node (output side)
 * LOG      every SET_CUR is appended, in order, one line "set NAME VALUE"; a refused one
 *          "refused NAME (why)"; "stream on" / "stream off" when the host starts and stops
 *          streaming, "firmware NAME VALUE" when the camera changes a control by itself
 * PICTURE  640x480 8-bit luma (raw), the scene; frames are YUYV 640x480 of it, chroma neutral
 * SHARP    the focus_absolute value at which the picture is sharp; the box blur's radius is
 *          |focus_absolute - SHARP| / 10 pixels (with autofocus on, the lens is at SHARP: a
 *          camera whose autofocus found the code)
 * reset-focus-auto   at each stream start focus_auto goes back to 1, as Logitech firmware does
 *
 * Controls (UVC entity ids are usb_f_uvc's defaults: camera terminal 1, processing unit 2):
 *   camera terminal: AE mode (manual or aperture priority, default aperture), AE priority
 *   (default 1: the frame rate may drop), exposure time absolute (3-2047, default 250), focus
 *   absolute (0-250 step 5, default 0), focus auto (default 1);
 *   processing unit: backlight compensation (0-2, default 1), power line frequency (0-2,
 *   default 2: 60 Hz).
 * A SET_CUR of focus absolute while focus auto is on is refused: the request stalls and the
 * request error code control says "wrong state" (uvcvideo returns EILSEQ).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <linux/usb/ch9.h>
#include <linux/usb/g_uvc.h>
#include <linux/usb/video.h>
#include <linux/videodev2.h>

#define W 640
#define H 480
#define FRAME_BYTES (W * H * 2)
#define FRAME_INTERVAL 1000000   /* 100 ns units: 10 fps, as the configfs frame says */
#define NBUF 3
#define CT_ID 1
#define PU_ID 2
#define VC_INTF 0
#define VS_INTF 1
/* One payload per bulk request in the patched usb_f_uvc (uvc-gadget.patch): 32 packets of 512
 * bytes at high speed. uvcvideo takes dwMaxPayloadTransferSize as the payload size of a bulk stream. */
#define PAYLOAD (32 * 512)

struct control {
    uint8_t entity, cs, size, info;
    const char *name;
    int32_t min, max, res, def, cur;
};
/* GET_INFO: bit 0 GET, bit 1 SET, bit 3 auto-update. The focus controls are auto-update: the
 * camera changes them itself (autofocus moves the lens; this firmware resets focus_auto at stream
 * start), and uvcvideo answers reads of controls without it from its cache, so a read-back after
 * STREAMON would not see the camera's change. */
static struct control controls[] = {
    {CT_ID, UVC_CT_AE_MODE_CONTROL, 1, 0x03, "ae_mode", 0, 0, 0x09, 8, 8},   /* res: the modes' bitmap */
    {CT_ID, UVC_CT_AE_PRIORITY_CONTROL, 1, 0x03, "ae_priority", 0, 1, 1, 1, 1},
    {CT_ID, UVC_CT_EXPOSURE_TIME_ABSOLUTE_CONTROL, 4, 0x03, "exposure_time_absolute", 3, 2047, 1, 250, 250},
    {CT_ID, UVC_CT_FOCUS_ABSOLUTE_CONTROL, 2, 0x0b, "focus_absolute", 0, 250, 5, 0, 0},
    {CT_ID, UVC_CT_FOCUS_AUTO_CONTROL, 1, 0x0b, "focus_auto", 0, 1, 1, 1, 1},
    {PU_ID, UVC_PU_BACKLIGHT_COMPENSATION_CONTROL, 2, 0x03, "backlight_compensation", 0, 2, 1, 1, 1},
    {PU_ID, UVC_PU_POWER_LINE_FREQUENCY_CONTROL, 1, 0x03, "power_line_frequency", 0, 2, 1, 2, 2},
};
#define NCONTROLS (sizeof controls / sizeof controls[0])

static int fd;
static FILE *logf;
static int sharp, reset_focus_auto;
static uint8_t error_code;               /* the request error code control (VC interface) */
static struct control *pending;          /* a SET_CUR whose data phase is coming */
static int pending_vs;                   /* ... or a probe/commit SET_CUR (1 probe, 2 commit) */
static struct uvc_streaming_control probe;
static uint8_t picture[W * H], frame[FRAME_BYTES];
static int frame_focus = -1, frame_auto = -1;
static void *bufs[NBUF];
static int streaming, free_bufs[NBUF], nfree;
static double next_due;

static void say(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vfprintf(logf, fmt, ap);
    va_end(ap);
    fputc('\n', logf);
    fflush(logf);
}

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static struct control *find(int entity, int cs) {
    for (size_t i = 0; i < NCONTROLS; i++)
        if (controls[i].entity == entity && controls[i].cs == cs) return &controls[i];
    return NULL;
}
static struct control *named(const char *name) {
    for (size_t i = 0; i < NCONTROLS; i++)
        if (!strcmp(controls[i].name, name)) return &controls[i];
    return NULL;
}

static void put_le(uint8_t *p, int32_t v, int size) {
    for (int i = 0; i < size; i++) p[i] = (uint32_t)v >> (8 * i);
}
static int32_t get_le(const uint8_t *p, int size) {
    uint32_t v = 0;
    for (int i = 0; i < size; i++) v |= (uint32_t)p[i] << (8 * i);
    return size == 2 ? (int16_t)v : (int32_t)v;
}

/* The picture as the lens shows it: a separable box blur of radius |focus - sharp| / 10 (the
 * lens at SHARP while autofocus is on), into the YUYV frame. Recomputed when the focus changes. */
static void render(void) {
    struct control *fa = named("focus_absolute"), *au = named("focus_auto");
    if (fa->cur == frame_focus && au->cur == frame_auto) return;
    frame_focus = fa->cur, frame_auto = au->cur;
    int r = au->cur ? 0 : abs(fa->cur - sharp) / 10;
    static uint16_t tmp[W * H];
    for (int y = 0; y < H; y++) {           /* horizontal pass: sums of 2r+1, clamped at the edges */
        const uint8_t *row = picture + y * W;
        for (int x = 0; x < W; x++) {
            int s = 0;
            for (int k = -r; k <= r; k++) { int i = x + k; s += row[i < 0 ? 0 : i >= W ? W - 1 : i]; }
            tmp[y * W + x] = s;
        }
    }
    int n = (2 * r + 1) * (2 * r + 1);
    for (int x = 0; x < W; x++)              /* vertical pass, then divide */
        for (int y = 0; y < H; y++) {
            int s = 0;
            for (int k = -r; k <= r; k++) { int i = y + k; s += tmp[(i < 0 ? 0 : i >= H ? H - 1 : i) * W + x]; }
            frame[(y * W + x) * 2] = s / n;
            frame[(y * W + x) * 2 + 1] = 0x80;
        }
    fprintf(stderr, "uvc-gadget: focus_absolute %d, focus_auto %d: blur radius %d\n", fa->cur, au->cur, r);
}

static void respond(const void *data, int len) {
    struct uvc_request_data r;
    memset(&r, 0, sizeof r);
    r.length = len;
    if (data && len > 0) memcpy(r.data, data, len);   /* no data: a SET_CUR, the host's data phase to come */
    if (ioctl(fd, UVCIOC_SEND_RESPONSE, &r) < 0) perror("uvc-gadget: UVCIOC_SEND_RESPONSE");
}
static void stall(uint8_t code) {
    error_code = code;
    respond(NULL, -1);   /* a negative length: usb_f_uvc stalls endpoint 0 */
}

/* The probe/commit answer: the one format and frame, 10 fps, one payload per bulk request. */
static void fill_probe(struct uvc_streaming_control *c) {
    memset(c, 0, sizeof *c);
    c->bmHint = 1;
    c->bFormatIndex = 1;
    c->bFrameIndex = 1;
    c->dwFrameInterval = FRAME_INTERVAL;
    c->dwMaxVideoFrameSize = FRAME_BYTES;
    c->dwMaxPayloadTransferSize = PAYLOAD;
    c->bmFramingInfo = 3;
    c->bPreferedVersion = 1;
    c->bMaxVersion = 1;
}

static void stream_off(void) {
    if (!streaming) return;
    int type = V4L2_BUF_TYPE_VIDEO_OUTPUT;
    if (ioctl(fd, VIDIOC_STREAMOFF, &type) < 0) perror("uvc-gadget: STREAMOFF");
    for (int i = 0; i < NBUF; i++) munmap(bufs[i], FRAME_BYTES);
    struct v4l2_requestbuffers rb = {.count = 0, .type = V4L2_BUF_TYPE_VIDEO_OUTPUT, .memory = V4L2_MEMORY_MMAP};
    ioctl(fd, VIDIOC_REQBUFS, &rb);
    streaming = 0;
    say("stream off");
}

static void queue_frame(int index) {
    render();
    memcpy(bufs[index], frame, FRAME_BYTES);
    struct v4l2_buffer b = {.index = index, .type = V4L2_BUF_TYPE_VIDEO_OUTPUT, .memory = V4L2_MEMORY_MMAP,
                            .bytesused = FRAME_BYTES};
    if (ioctl(fd, VIDIOC_QBUF, &b) < 0) perror("uvc-gadget: QBUF");
}

/* The host committed: (re)start the stream. A bulk stream has no SET_INTERFACE: the commit is
 * the start (uvcvideo's uvc_video_start_transfer), and nothing tells the gadget of its end. */
static void stream_on(void) {
    stream_off();
    if (reset_focus_auto && named("focus_auto")->cur != 1) {
        named("focus_auto")->cur = 1;
        say("firmware focus_auto 1 (stream start)");
    }
    struct v4l2_format f = {.type = V4L2_BUF_TYPE_VIDEO_OUTPUT};
    f.fmt.pix.width = W, f.fmt.pix.height = H, f.fmt.pix.pixelformat = V4L2_PIX_FMT_YUYV;
    f.fmt.pix.field = V4L2_FIELD_NONE, f.fmt.pix.sizeimage = FRAME_BYTES;
    struct v4l2_requestbuffers rb = {.count = NBUF, .type = V4L2_BUF_TYPE_VIDEO_OUTPUT, .memory = V4L2_MEMORY_MMAP};
    if (ioctl(fd, VIDIOC_S_FMT, &f) < 0 || ioctl(fd, VIDIOC_REQBUFS, &rb) < 0 || rb.count < NBUF) {
        perror("uvc-gadget: S_FMT/REQBUFS"); return;
    }
    for (int i = 0; i < NBUF; i++) {
        struct v4l2_buffer b = {.index = i, .type = V4L2_BUF_TYPE_VIDEO_OUTPUT, .memory = V4L2_MEMORY_MMAP};
        if (ioctl(fd, VIDIOC_QUERYBUF, &b) < 0) { perror("uvc-gadget: QUERYBUF"); return; }
        bufs[i] = mmap(NULL, b.length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, b.m.offset);
        if (bufs[i] == MAP_FAILED) { perror("uvc-gadget: mmap"); return; }
    }
    for (int i = 0; i < NBUF; i++) queue_frame(i);
    nfree = 0;
    next_due = now_ms() + FRAME_INTERVAL / 1e4;
    int type = V4L2_BUF_TYPE_VIDEO_OUTPUT;
    if (ioctl(fd, VIDIOC_STREAMON, &type) < 0) { perror("uvc-gadget: STREAMON"); return; }
    streaming = 1;
    say("stream on");
}

static void setup(const struct usb_ctrlrequest *req) {
    int intf = req->wIndex & 0xff, entity = req->wIndex >> 8, cs = req->wValue >> 8, len = req->wLength;
    uint8_t out[64] = {0};
    pending = NULL, pending_vs = 0;
    /* Every request, on stderr (the test shows it when a check fails). */
    fprintf(stderr, "uvc-gadget: request %#04x %#04x intf %d entity %d cs %d len %d\n",
            req->bRequestType, req->bRequest, intf, entity, cs, len);
    if (entity == 0 && intf == VS_INTF && (cs == UVC_VS_PROBE_CONTROL || cs == UVC_VS_COMMIT_CONTROL)) {
        if (req->bRequest == UVC_SET_CUR) {
            /* Stop before the data phase: no frame of the old stream may be left in the endpoint
             * when the host's new bulk transfers come, right after the commit's status stage. */
            if (cs == UVC_VS_COMMIT_CONTROL) stream_off();
            pending_vs = cs;
            respond(NULL, len);
            return;
        }
        struct uvc_streaming_control c;
        switch (req->bRequest) {
        case UVC_GET_CUR: c = probe; break;
        case UVC_GET_MIN: case UVC_GET_MAX: case UVC_GET_DEF: fill_probe(&c); break;
        case UVC_GET_LEN: put_le(out, sizeof c, 2); respond(out, len < 2 ? len : 2); return;
        case UVC_GET_INFO: out[0] = 0x03; respond(out, 1); return;
        default: stall(7); return;
        }
        if (len > (int)sizeof c) len = sizeof c;
        respond(&c, len);
        return;
    }
    if (entity == 0 && intf == VC_INTF && cs == UVC_VC_REQUEST_ERROR_CODE_CONTROL && req->bRequest == UVC_GET_CUR) {
        out[0] = error_code;
        respond(out, 1);
        return;
    }
    struct control *c = find(entity, cs);
    if (!c) { fprintf(stderr, "uvc-gadget: no control %d/%d (request %#x)\n", entity, cs, req->bRequest); stall(6); return; }
    int32_t v;
    switch (req->bRequest) {
    case UVC_SET_CUR:
        if (c == named("focus_absolute") && named("focus_auto")->cur) {
            say("refused focus_absolute (focus_auto on)");
            stall(2);   /* wrong state */
            return;
        }
        pending = c;
        respond(NULL, len);
        return;
    case UVC_GET_CUR: v = c->cur; break;
    case UVC_GET_MIN: v = c->min; break;
    case UVC_GET_MAX: v = c->max; break;
    case UVC_GET_RES: v = c->res; break;
    case UVC_GET_DEF: v = c->def; break;
    case UVC_GET_INFO: out[0] = c->info; respond(out, 1); error_code = 0; return;
    case UVC_GET_LEN: put_le(out, c->size, 2); respond(out, 2); error_code = 0; return;
    default: stall(7); return;
    }
    put_le(out, v, c->size);
    respond(out, len < c->size ? len : c->size);
    error_code = 0;
}

static void data(const struct uvc_request_data *d) {
    if (pending_vs) {
        struct uvc_streaming_control c;
        memset(&c, 0, sizeof c);
        memcpy(&c, d->data, d->length < (int)sizeof c ? d->length : (int)sizeof c);
        fill_probe(&probe);   /* what the host asked, within the one format this camera has */
        if (c.dwFrameInterval) probe.dwFrameInterval = FRAME_INTERVAL;
        if (pending_vs == UVC_VS_COMMIT_CONTROL) stream_on();
        pending_vs = 0;
        return;
    }
    if (!pending) return;
    struct control *c = pending;
    pending = NULL;
    int32_t v = get_le(d->data, c->size);
    c->cur = v;
    error_code = 0;
    say("set %s %d", c->name, v);
}

int main(int argc, char **argv) {
    if (argc < 5) {
        fprintf(stderr, "usage: uvc-gadget DEVICE LOG PICTURE SHARP [reset-focus-auto]\n");
        return 64;
    }
    sharp = atoi(argv[4]);
    reset_focus_auto = argc > 5 && !strcmp(argv[5], "reset-focus-auto");
    FILE *p = fopen(argv[3], "rb");
    if (!p || fread(picture, 1, sizeof picture, p) != sizeof picture) { perror(argv[3]); return 1; }
    fclose(p);
    logf = fopen(argv[2], "a");
    if (!logf) { perror(argv[2]); return 1; }
    fd = open(argv[1], O_RDWR | O_NONBLOCK);
    if (fd < 0) { perror(argv[1]); return 1; }
    fill_probe(&probe);
    /* Subscribing to SETUP connects the gadget (usb_f_uvc waits for its program): the host
     * enumerates it from here on. */
    int events[] = {UVC_EVENT_CONNECT, UVC_EVENT_DISCONNECT, UVC_EVENT_STREAMON, UVC_EVENT_STREAMOFF,
                    UVC_EVENT_DATA, UVC_EVENT_SETUP};
    for (size_t i = 0; i < sizeof events / sizeof events[0]; i++) {
        struct v4l2_event_subscription s = {.type = events[i]};
        if (ioctl(fd, VIDIOC_SUBSCRIBE_EVENT, &s) < 0) { perror("uvc-gadget: SUBSCRIBE_EVENT"); return 1; }
    }
    fprintf(stderr, "uvc-gadget: ready on %s, sharp at focus_absolute %d%s\n", argv[1], sharp,
            reset_focus_auto ? ", focus_auto reset at stream start" : "");
    for (;;) {
        int timeout = -1;
        if (streaming && nfree) {
            double t = now_ms();
            if (t >= next_due) {   /* the next frame is due: the lens as it is now */
                queue_frame(free_bufs[--nfree]);
                next_due = (next_due + FRAME_INTERVAL / 1e4 > t) ? next_due + FRAME_INTERVAL / 1e4 : t + FRAME_INTERVAL / 1e4;
                continue;
            }
            timeout = (int)(next_due - t) + 1;
        }
        struct pollfd pfd = {.fd = fd, .events = POLLPRI | (streaming ? POLLOUT : 0)};
        if (poll(&pfd, 1, timeout) < 0) { if (errno == EINTR) continue; perror("uvc-gadget: poll"); return 1; }
        if (pfd.revents & POLLPRI) {
            struct v4l2_event ev;
            while (ioctl(fd, VIDIOC_DQEVENT, &ev) == 0) {
                struct uvc_event *u = (struct uvc_event *)&ev.u.data;
                switch (ev.type) {
                case UVC_EVENT_SETUP: setup(&u->req); break;
                case UVC_EVENT_DATA: data(&u->data); break;
                case UVC_EVENT_CONNECT: fprintf(stderr, "uvc-gadget: connected\n"); break;
                case UVC_EVENT_DISCONNECT: stream_off(); fprintf(stderr, "uvc-gadget: disconnected\n"); break;
                case UVC_EVENT_STREAMOFF: stream_off(); break;
                }
            }
        }
        if (streaming && (pfd.revents & POLLERR)) {   /* the queue failed (the host went away) */
            stream_off();
            continue;
        }
        if (streaming && (pfd.revents & POLLOUT)) {
            struct v4l2_buffer b = {.type = V4L2_BUF_TYPE_VIDEO_OUTPUT, .memory = V4L2_MEMORY_MMAP};
            while (nfree < NBUF && ioctl(fd, VIDIOC_DQBUF, &b) == 0) free_bufs[nfree++] = b.index;
        }
    }
}
