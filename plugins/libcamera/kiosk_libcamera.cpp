// SPDX-License-Identifier: Apache-2.0
/*
 * The kiosk's libcamera plugin: the kiosk_lcp_* functions of kiosk_libcamera.h over libcamera's
 * C++ API. Built against the libcamera of the machine it runs on (Makefile beside it); the kiosk
 * dlopen()s it (Sources/CLibcamera/loader.c) and never links libcamera itself.
 *
 * The same source builds against Debian 12's libcamera 0.0.3, Debian 13's 0.4.0 and Raspberry Pi
 * OS's 0.5.x: it only uses API that all of them have, and asks LIBCAMERA_VERSION_* where 0.0.3
 * lacks something (ControlId::isArray(), the unsigned control types).
 *
 * Shape: one CameraManager per open camera (libcamera allows one per process at a time), one
 * viewfinder stream, one Request per buffer, reused. Open configures and says which controls the
 * camera advertises; start is separate, so that the kiosk chooses the start controls (focus,
 * exposure) from them. libcamera's own thread completes requests
 * (requestCompleted) onto a queue; kiosk_lcp_next() takes them off it, with a CLOCK_MONOTONIC
 * timed wait. The request handed to the caller is requeued at the next call.
 *
 * Nothing here throws across the C boundary (every entry point catches), and nothing calls
 * Camera::stop() on a camera that stopped delivering: libcamera asserts (FATAL, abort) there when
 * requests are still pending, in 0.0.3 as in 0.5.2. Such a camera is abandoned instead.
 */
#include "kiosk_libcamera.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/dma-buf.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <deque>
#include <utility>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <libcamera/camera.h>
#include <libcamera/camera_manager.h>
#include <libcamera/control_ids.h>
#include <libcamera/formats.h>
#include <libcamera/framebuffer.h>
#include <libcamera/framebuffer_allocator.h>
#include <libcamera/property_ids.h>
#include <libcamera/request.h>
#include <libcamera/stream.h>
#include <libcamera/version.h>

#define KIOSK_LCP_EXPORT extern "C" __attribute__((visibility("default")))

using namespace libcamera;

namespace {

void say(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void say(char *buf, size_t len, const char *fmt, ...) {
    if (!buf || len == 0) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, len, fmt, ap);
    va_end(ap);
}

// The plugin's one loop on EINTR: `call` made again while it fails with EINTR (a signal's handler
// interrupted it, and it did nothing), its result otherwise. The kiosk's own loop is Swift's
// Syscall.retryingEINTR, which the plugin (C++, dlopen'd, given no kiosk names) cannot call.
template <typename Call> int retrying_eintr(Call call) {
    int result;
    while ((result = call()) < 0 && errno == EINTR) {}
    return result;
}

uint64_t now_ns() {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

// How long outstanding requests may go without any completing before close() abandons the camera
// rather than stopping it.
constexpr uint64_t kStallNs = 2000000000ull;

// The stream formats the plugin can take luma (or green) from, best first: where the luma sample
// of pixel 0 is (byte offset in plane 0) and the distance between samples.
struct LumaFormat {
    PixelFormat format;
    int offset;
    int pixel_stride;
};
const LumaFormat kFormats[] = {
    {formats::YUV420, 0, 1},   {formats::NV12, 0, 1},     {formats::NV21, 0, 1},
    {formats::YVU420, 0, 1},   {formats::NV16, 0, 1},     {formats::NV61, 0, 1},
    {formats::YUV422, 0, 1},   {formats::R8, 0, 1},       {formats::YUYV, 0, 2},
    {formats::YVYU, 0, 2},     {formats::UYVY, 1, 2},     {formats::VYUY, 1, 2},
    // RGB: the green channel stands in for luma. BGR888 (DRM order) is R, G, B in memory,
    // RGB888 B, G, R; XRGB8888 B, G, R, X; XBGR8888 R, G, B, X: green is byte 1 in each.
    {formats::BGR888, 1, 3},   {formats::RGB888, 1, 3},   {formats::XRGB8888, 1, 4},
    {formats::XBGR8888, 1, 4}, {formats::ARGB8888, 1, 4}, {formats::ABGR8888, 1, 4},
};
// Controls as the kiosk gives them, turned into libcamera's ids and values (checked).
using ControlValues = std::vector<std::pair<unsigned int, ControlValue>>;

const LumaFormat *luma_format(const PixelFormat &f) {
    for (const auto &l : kFormats)
        if (l.format == f) return &l;
    return nullptr;
}

// libcamera logs INFO lines to stderr by default; the kiosk's journal wants warnings and errors
// only. LIBCAMERA_LOG_LEVELS is read once, when libcamera's logger is first used (the first
// CameraManager), and applies to categories made later too; logSetLevel() in 0.0.3 only changes
// categories that exist already, by exact name, so the variable is the way. An operator's own
// setting is kept.
void quiet_logging() {
    static std::once_flag once;
    std::call_once(once, [] { setenv("LIBCAMERA_LOG_LEVELS", "*:WARN", 0); });
}

// One CameraManager may exist at a time in a process (libcamera: FATAL otherwise), so the plugin
// keeps count: the open camera's, or an abandoned one's, which lives until the process exits.
std::mutex g_lock;
kiosk_lc *g_open = nullptr;
bool g_abandoned = false;

}  // namespace

struct Mapping {
    void *addr;
    size_t length;
    int fd;
};

struct BufferState {
    std::vector<Mapping> maps;  // one per distinct dmabuf fd of the buffer's planes
    const uint8_t *plane0 = nullptr;
};

struct kiosk_lc {
    std::unique_ptr<CameraManager> manager;
    std::shared_ptr<Camera> camera;
    std::unique_ptr<CameraConfiguration> config;
    Stream *stream = nullptr;
    std::unique_ptr<FrameBufferAllocator> allocator;
    std::vector<std::unique_ptr<Request>> requests;
    std::map<const FrameBuffer *, BufferState> buffers;
    bool acquired = false, started = false, connected = false;

    const LumaFormat *luma = nullptr;
    int32_t width = 0, height = 0, row_stride = 0;
    double fps = 0;  // asked for at open, given at start as FrameDurationLimits (0: not)
    bool has_crop_control = false;
    bool crop_set = false;
    Rectangle crop;
    ControlValues per_request;  // kiosk_lcp_set_controls: given with every request queued
    Rectangle crop_maximum;
    bool has_crop_maximum = false;

    // Shared with libcamera's thread, under mu.
    pthread_mutex_t mu;
    pthread_cond_t cv;
    std::deque<Request *> done;
    int outstanding = 0;            // queued, not yet completed
    uint64_t last_progress_ns = 0;  // start, or the last completion
    bool disconnected = false;
    bool ignoring = false;          // stopping or abandoned: completions are dropped

    Request *held = nullptr;        // handed to the caller, requeued at the next call

    kiosk_lc() {
        pthread_mutex_init(&mu, nullptr);
        pthread_condattr_t attr;
        pthread_condattr_init(&attr);
        pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
        pthread_cond_init(&cv, &attr);
        pthread_condattr_destroy(&attr);
    }

    // libcamera's thread.
    void requestCompleted(Request *request) {
        pthread_mutex_lock(&mu);
        outstanding--;
        last_progress_ns = now_ns();
        if (!ignoring && request->status() != Request::RequestCancelled) {
            done.push_back(request);
            pthread_cond_signal(&cv);
        }
        pthread_mutex_unlock(&mu);
    }
    void cameraDisconnected() {
        pthread_mutex_lock(&mu);
        disconnected = true;
        pthread_cond_broadcast(&cv);
        pthread_mutex_unlock(&mu);
    }

    void sync(Request *request, uint64_t flags) {
        FrameBuffer *fb = request->findBuffer(stream);
        if (!fb) return;
        auto it = buffers.find(fb);
        if (it == buffers.end()) return;
        for (const Mapping &m : it->second.maps) {
            struct dma_buf_sync s = {flags | DMA_BUF_SYNC_READ};
            // Not every exporter implements it (then the buffer is coherent): errors are ignored.
            retrying_eintr([&] { return ioctl(m.fd, DMA_BUF_IOCTL_SYNC, &s); });
        }
    }

    // The controls every request carries: the crop and the kiosk's per-request list.
    void add_controls(Request *request) {
        if (crop_set) request->controls().set(controls::ScalerCrop, crop);
        for (const auto &v : per_request) request->controls().set(v.first, v.second);
    }

    // Queues request again (reused, with its buffer), with the controls of now.
    int queue(Request *request, char *err, size_t errlen) {
        request->reuse(Request::ReuseBuffers);
        add_controls(request);
        pthread_mutex_lock(&mu);
        outstanding++;
        if (outstanding == 1) last_progress_ns = now_ns();
        pthread_mutex_unlock(&mu);
        int ret = camera->queueRequest(request);
        if (ret < 0) {
            pthread_mutex_lock(&mu);
            outstanding--;
            pthread_mutex_unlock(&mu);
            say(err, errlen, "queueRequest: %s", strerror(-ret));
            return -1;
        }
        return 0;
    }

    void unmap() {
        for (auto &b : buffers)
            for (const Mapping &m : b.second.maps) munmap(m.addr, m.length);
        buffers.clear();
    }

    // Undoes open, in reverse, as far as it got. Only for a camera that is stopped (or never
    // started) with no request pending in the pipeline.
    void teardown() {
        if (held) {
            sync(held, DMA_BUF_SYNC_END);
            held = nullptr;
        }
        if (connected) {
            camera->requestCompleted.disconnect(this);
            camera->disconnected.disconnect(this);
            connected = false;
        }
        unmap();
        requests.clear();
        if (allocator && stream) allocator->free(stream);
        allocator.reset();
        config.reset();
        if (camera && acquired) camera->release();
        acquired = false;
        camera.reset();
        if (manager) manager->stop();
        manager.reset();
    }
};

namespace {

std::string join_formats(const std::vector<PixelFormat> &formats) {
    std::string s;
    for (const auto &f : formats) s += (s.empty() ? "" : " ") + f.toString();
    return s.empty() ? "none" : s;
}

// Whether the camera has control id. Not ControlInfoMap::count(id): that counts in the map's id
// map, which for some pipelines (vimc in 0.0.3) is libcamera's list of every control there is.
bool has_control(const ControlInfoMap &map, const ControlId &id) { return map.find(&id) != map.end(); }

#if LIBCAMERA_VERSION_MAJOR > 0 || LIBCAMERA_VERSION_MINOR >= 4
bool is_array(const ControlId &id) { return id.isArray(); }
#else
// 0.0.3's ControlId does not say whether a control takes an array (ControlId::isArray() came
// with 0.4): its control_ids.h's array controls, by id.
bool is_array(const ControlId &id) {
    const unsigned int n = id.id();
    return n == controls::AfWindows.id() || n == controls::FrameDurationLimits.id() ||
           n == controls::ColourGains.id() || n == controls::SensorBlackLevels.id() ||
           n == controls::ColourCorrectionMatrix.id();
}
#endif

// The kiosk's kind of a control: KIOSK_LC_*.
int32_t kind_of(ControlType type) {
    switch (type) {
    case ControlTypeByte:
    case ControlTypeInteger32:
    case ControlTypeInteger64:
#if LIBCAMERA_VERSION_MAJOR > 0 || LIBCAMERA_VERSION_MINOR >= 4
    case ControlTypeUnsigned16:
    case ControlTypeUnsigned32:
#endif
        return KIOSK_LC_INT;
    case ControlTypeFloat:
        return KIOSK_LC_FLOAT;
    case ControlTypeRectangle:
        return KIOSK_LC_RECTANGLES;
    default:
        return KIOSK_LC_OTHER;
    }
}

// A single numeric value as a double; false for none, arrays and the other kinds.
bool as_number(const ControlValue &v, double *out) {
    if (v.isNone() || v.isArray()) return false;
    switch (v.type()) {
    case ControlTypeBool: *out = v.get<bool>() ? 1 : 0; return true;
    case ControlTypeByte: *out = v.get<uint8_t>(); return true;
    case ControlTypeInteger32: *out = v.get<int32_t>(); return true;
    case ControlTypeInteger64: *out = (double)v.get<int64_t>(); return true;
    case ControlTypeFloat: *out = v.get<float>(); return true;
#if LIBCAMERA_VERSION_MAJOR > 0 || LIBCAMERA_VERSION_MINOR >= 4
    case ControlTypeUnsigned16: *out = v.get<uint16_t>(); return true;
    case ControlTypeUnsigned32: *out = v.get<uint32_t>(); return true;
#endif
    default: return false;
    }
}

const char *kind_name(int32_t kind) {
    switch (kind) {
    case KIOSK_LC_INT: return "an integer";
    case KIOSK_LC_FLOAT: return "a float";
    case KIOSK_LC_RECTANGLES: return "a rectangle";
    default: return "a kind the kiosk does not set";
    }
}

// The camera's advertised controls into info, by rising id (libcamera's own before vendors').
// The map is walked, never asked by id (see has_control).
void describe_controls(const ControlInfoMap &map, struct kiosk_lc_info *info) {
    std::vector<std::pair<const ControlId *, const ControlInfo *>> all;
    for (const auto &e : map) all.emplace_back(e.first, &e.second);
    std::sort(all.begin(), all.end(), [](const auto &a, const auto &b) { return a.first->id() < b.first->id(); });
    for (const auto &e : all) {
        const std::string &name = e.first->name();
        if (info->offer_count >= KIOSK_LC_MAX_OFFERS || name.size() >= sizeof info->offers[0].name) {
            info->offers_left_out++;
            continue;
        }
        struct kiosk_lc_control_offer &o = info->offers[info->offer_count++];
        snprintf(o.name, sizeof o.name, "%s", name.c_str());
        o.type = kind_of(e.first->type());
        o.numeric = as_number(e.second->min(), &o.min) && as_number(e.second->max(), &o.max) ? 1 : 0;
        if (!o.numeric) o.min = o.max = 0;
        o.has_def = o.numeric && as_number(e.second->def(), &o.def) ? 1 : 0;
    }
}

// The kiosk's controls as libcamera values, each looked up by name in the camera's ControlInfoMap
// and of the control's type. A name the camera lacks fails, named: nothing is dropped unsaid
// (libcamera itself would only log "not valid" and go on).
bool to_values(const ControlInfoMap &map, const struct kiosk_lc_control *list, int32_t count, ControlValues *out,
               char *err, size_t errlen) {
    if (count < 0 || (count > 0 && !list)) {
        say(err, errlen, "%d controls", count);
        return false;
    }
    out->clear();
    for (int32_t k = 0; k < count; k++) {
        const struct kiosk_lc_control &w = list[k];
        std::string name(w.name, strnlen(w.name, sizeof w.name));
        const ControlId *id = nullptr;
        for (const auto &e : map) {
            if (e.first->name() == name) {
                id = e.first;
                break;
            }
        }
        if (!id) {
            say(err, errlen, "the camera has no control %s", name.c_str());
            return false;
        }
        int32_t kind = kind_of(id->type());
        if (w.type != kind || kind == KIOSK_LC_OTHER) {
            say(err, errlen, "%s is %s control, given %s", name.c_str(), kind_name(kind), kind_name(w.type));
            return false;
        }
        bool array = is_array(*id);
        if (array && kind != KIOSK_LC_RECTANGLES) {
            say(err, errlen, "%s takes an array, given one value", name.c_str());
            return false;
        }
        ControlValue value;
        switch (id->type()) {
        case ControlTypeInteger32: value = ControlValue(w.i); break;
        case ControlTypeInteger64: value = ControlValue((int64_t)w.i); break;
        case ControlTypeFloat: value = ControlValue(w.f); break;
        case ControlTypeRectangle: {
            if (w.count < 1 || w.count > 4 || (!array && w.count != 1)) {
                say(err, errlen, "%s takes %s, given %d rectangles", name.c_str(), array ? "1 to 4" : "one", w.count);
                return false;
            }
            std::vector<Rectangle> rects;
            for (int32_t r = 0; r < w.count; r++) {
                const struct kiosk_lc_rect &x = w.rects[r];
                if (x.width < 0 || x.height < 0) {
                    say(err, errlen, "%s: rectangle %dx%d", name.c_str(), x.width, x.height);
                    return false;
                }
                rects.emplace_back(x.x, x.y, (unsigned int)x.width, (unsigned int)x.height);
            }
            if (array) value = ControlValue(Span<const Rectangle>(rects.data(), rects.size()));
            else value = ControlValue(rects[0]);
            break;
        }
        default:
            // A byte or unsigned integer control: none the kiosk sets.
            say(err, errlen, "%s is an integer control of a width the plugin does not set", name.c_str());
            return false;
        }
        out->emplace_back(id->id(), value);
    }
    return true;
}

bool all_digits(const char *s) {
    if (!*s) return false;
    for (; *s; s++)
        if (*s < '0' || *s > '9') return false;
    return true;
}

// Open, step by step; on failure a message in err and false (the caller tears down).
bool open_camera(kiosk_lc *c, const char *which, int32_t width, int32_t height, double fps,
                 struct kiosk_lc_info *info, char *err, size_t errlen) {
    c->manager = std::make_unique<CameraManager>();
    int ret = c->manager->start();
    if (ret < 0) {
        c->manager.reset();
        say(err, errlen, "libcamera CameraManager::start: %s", strerror(-ret));
        return false;
    }
    std::vector<std::shared_ptr<Camera>> cameras = c->manager->cameras();
    if (cameras.empty()) {
        say(err, errlen, "libcamera lists no camera");
        return false;
    }
    if (!which || !*which) {
        c->camera = cameras[0];
    } else {
        c->camera = c->manager->get(which);
        if (!c->camera && all_digits(which)) {
            unsigned long i = strtoul(which, nullptr, 10);
            if (i < cameras.size()) c->camera = cameras[i];
        }
        if (!c->camera) {
            say(err, errlen, "no camera \"%s\" (libcamera lists %zu: first %s)", which, cameras.size(),
                cameras[0]->id().c_str());
            return false;
        }
    }
    ret = c->camera->acquire();
    if (ret < 0) {
        say(err, errlen, "acquire %s: %s", c->camera->id().c_str(),
            ret == -EBUSY ? "the camera is in use by another process" : strerror(-ret));
        return false;
    }
    c->acquired = true;

    c->config = c->camera->generateConfiguration({StreamRole::Viewfinder});
    if (!c->config || c->config->empty()) {
        say(err, errlen, "%s: no viewfinder configuration", c->camera->id().c_str());
        return false;
    }
    StreamConfiguration &sc = c->config->at(0);
    std::vector<PixelFormat> offered = sc.formats().pixelformats();
    const LumaFormat *pick = nullptr;
    for (const auto &l : kFormats) {
        if (std::find(offered.begin(), offered.end(), l.format) != offered.end()) {
            pick = &l;
            break;
        }
    }
    if (!pick) {
        say(err, errlen, "%s: no stream format with a luma or green plane (offered: %s)",
            c->camera->id().c_str(), join_formats(offered).c_str());
        return false;
    }
    sc.pixelFormat = pick->format;
    if (width > 0 && height > 0) sc.size = Size((unsigned int)width, (unsigned int)height);
    if (c->config->validate() == CameraConfiguration::Invalid) {
        say(err, errlen, "%s: configuration %s invalid", c->camera->id().c_str(), sc.toString().c_str());
        return false;
    }
    c->luma = luma_format(sc.pixelFormat);
    if (!c->luma) {
        say(err, errlen, "%s: the camera adjusted the format to %s, which has no luma plane",
            c->camera->id().c_str(), sc.pixelFormat.toString().c_str());
        return false;
    }
    ret = c->camera->configure(c->config.get());
    if (ret < 0) {
        say(err, errlen, "%s: configure %s: %s", c->camera->id().c_str(), sc.toString().c_str(), strerror(-ret));
        return false;
    }
    c->stream = sc.stream();
    c->width = (int32_t)sc.size.width;
    c->height = (int32_t)sc.size.height;
    c->row_stride = sc.stride ? (int32_t)sc.stride : c->width * c->luma->pixel_stride;

    c->allocator = std::make_unique<FrameBufferAllocator>(c->camera);
    ret = c->allocator->allocate(c->stream);
    if (ret <= 0) {
        say(err, errlen, "%s: allocating buffers: %s", c->camera->id().c_str(), ret < 0 ? strerror(-ret) : "none");
        return false;
    }
    for (const std::unique_ptr<FrameBuffer> &fb : c->allocator->buffers(c->stream)) {
        BufferState &state = c->buffers[fb.get()];
        // A std::vector up to 0.5, a Span from 0.6 on.
        const auto &planes = fb->planes();
        if (planes.empty()) {
            say(err, errlen, "a buffer without planes");
            return false;
        }
        // One mapping per dmabuf: planes often share one, at offsets.
        std::map<int, size_t> extent;
        for (const auto &p : planes) {
            size_t offset = p.offset == FrameBuffer::Plane::kInvalidOffset ? 0 : p.offset;
            size_t &e = extent[p.fd.get()];
            e = std::max(e, offset + p.length);
        }
        for (const auto &e : extent) {
            void *addr = mmap(nullptr, e.second, PROT_READ, MAP_SHARED, e.first, 0);
            if (addr == MAP_FAILED) {
                say(err, errlen, "mmap of a %zu-byte buffer: %s", e.second, strerror(errno));
                return false;
            }
            state.maps.push_back({addr, e.second, e.first});
        }
        const FrameBuffer::Plane &p0 = planes[0];
        size_t offset0 = p0.offset == FrameBuffer::Plane::kInvalidOffset ? 0 : p0.offset;
        for (const Mapping &m : state.maps)
            if (m.fd == p0.fd.get()) state.plane0 = (const uint8_t *)m.addr + offset0;
        size_t need = (size_t)c->row_stride * (size_t)(c->height - 1) +
                      (size_t)c->width * (size_t)c->luma->pixel_stride;
        if (p0.length < need) {
            say(err, errlen, "plane 0 is %u bytes, a %dx%d frame with stride %d needs %zu", p0.length,
                c->width, c->height, c->row_stride, need);
            return false;
        }
        std::unique_ptr<Request> request = c->camera->createRequest(c->requests.size());
        if (!request) {
            say(err, errlen, "createRequest failed");
            return false;
        }
        ret = request->addBuffer(c->stream, fb.get());
        if (ret < 0) {
            say(err, errlen, "Request::addBuffer: %s", strerror(-ret));
            return false;
        }
        c->requests.push_back(std::move(request));
    }

    const ControlInfoMap &ctrls = c->camera->controls();
    c->fps = fps > 0 && has_control(ctrls, controls::FrameDurationLimits) ? fps : 0;
    c->has_crop_control = has_control(ctrls, controls::ScalerCrop);
    std::optional<Rectangle> maximum = c->camera->properties().get(properties::ScalerCropMaximum);
    if (maximum) {
        c->crop_maximum = *maximum;
        c->has_crop_maximum = true;
    }

    if (info) {
        memset(info, 0, sizeof *info);
        snprintf(info->id, sizeof info->id, "%s", c->camera->id().c_str());
        // A std::string up to 0.5, a std::string_view from 0.6 on.
        auto model = c->camera->properties().get(properties::Model);
        snprintf(info->model, sizeof info->model, "%s", model ? std::string(*model).c_str() : "");
        snprintf(info->format, sizeof info->format, "%s", sc.pixelFormat.toString().c_str());
        info->width = c->width;
        info->height = c->height;
        info->fps = c->fps;
        info->has_scaler_crop = c->has_crop_control ? 1 : 0;
        if (maximum) info->crop_maximum = {maximum->x, maximum->y, (int32_t)maximum->width, (int32_t)maximum->height};
        describe_controls(ctrls, info);
    }
    return true;
}

// Start, step by step; on failure a message in err and false (the caller closes).
bool start_camera(kiosk_lc *c, const struct kiosk_lc_control *list, int32_t count, char *err, size_t errlen) {
    const ControlInfoMap &ctrls = c->camera->controls();
    ControlValues wanted;
    if (!to_values(ctrls, list, count, &wanted, err, errlen)) return false;
    ControlList start(ctrls);
    if (c->fps > 0) {
        int64_t us = (int64_t)(1e6 / c->fps + 0.5);
        start.set(controls::FrameDurationLimits, {us, us});
    }
    for (const auto &v : wanted) start.set(v.first, v.second);

    c->camera->requestCompleted.connect(c, &kiosk_lc::requestCompleted);
    c->camera->disconnected.connect(c, &kiosk_lc::cameraDisconnected);
    c->connected = true;
    int ret = c->camera->start(&start);
    if (ret < 0) {
        say(err, errlen, "%s: start: %s", c->camera->id().c_str(), strerror(-ret));
        return false;
    }
    c->started = true;
    c->last_progress_ns = now_ns();
    for (auto &r : c->requests) {
        c->add_controls(r.get());
        pthread_mutex_lock(&c->mu);
        c->outstanding++;
        pthread_mutex_unlock(&c->mu);
        ret = c->camera->queueRequest(r.get());
        if (ret < 0) {
            pthread_mutex_lock(&c->mu);
            c->outstanding--;
            pthread_mutex_unlock(&c->mu);
            say(err, errlen, "%s: queueRequest: %s", c->camera->id().c_str(), strerror(-ret));
            return false;
        }
    }
    return true;
}

// Whether close() must abandon: told so, or requests have been pending with none completing for
// longer than kStallNs, or the camera went away with requests still in its pipeline.
bool must_abandon(kiosk_lc *c, int stalled) {
    if (!c->started) return false;
    if (stalled) return true;
    pthread_mutex_lock(&c->mu);
    bool stuck = c->outstanding > 0 && (c->disconnected || now_ns() - c->last_progress_ns > kStallNs);
    pthread_mutex_unlock(&c->mu);
    return stuck;
}

void abandon(kiosk_lc *c) {
    pthread_mutex_lock(&c->mu);
    c->ignoring = true;
    c->done.clear();
    pthread_mutex_unlock(&c->mu);
    // Everything stays as it is (the pipeline may still hold the requests and buffers): leaked on
    // purpose, until the process exits.
    g_abandoned = true;
}

}  // namespace

KIOSK_LCP_EXPORT int kiosk_lcp_abi(void) { return KIOSK_LC_ABI; }

KIOSK_LCP_EXPORT const char *kiosk_lcp_version(void) {
    try {
        static std::string v = CameraManager::version();
        return v.c_str();
    } catch (...) {
        return "unknown";
    }
}

KIOSK_LCP_EXPORT int kiosk_lcp_list(char *buf, size_t len) {
    try {
        std::lock_guard<std::mutex> guard(g_lock);
        if (buf && len) buf[0] = 0;
        std::vector<std::shared_ptr<Camera>> cameras;
        std::unique_ptr<CameraManager> own;
        if (g_open) {
            cameras = g_open->manager->cameras();
        } else if (g_abandoned) {
            say(buf, len, "a camera was abandoned in this process (it stopped delivering): libcamera "
                          "cannot start another camera manager until the process exits");
            return -1;
        } else {
            quiet_logging();
            own = std::make_unique<CameraManager>();
            int ret = own->start();
            if (ret < 0) {
                say(buf, len, "libcamera CameraManager::start: %s", strerror(-ret));
                return -1;
            }
            cameras = own->cameras();
        }
        std::string out;
        for (const auto &cam : cameras) out += cam->id() + "\n";
        say(buf, len, "%s", out.c_str());
        int n = (int)cameras.size();
        cameras.clear();
        if (own) own->stop();
        return n;
    } catch (const std::exception &e) {
        say(buf, len, "libcamera: %s", e.what());
        return -1;
    } catch (...) {
        say(buf, len, "libcamera: an exception");
        return -1;
    }
}

KIOSK_LCP_EXPORT kiosk_lc *kiosk_lcp_open(const char *camera, int32_t width, int32_t height, double fps,
                                          struct kiosk_lc_info *info, char *err, size_t errlen) {
    kiosk_lc *c = nullptr;
    try {
        std::lock_guard<std::mutex> guard(g_lock);
        if (g_open) {
            say(err, errlen, "a libcamera camera is already open in this process (one at a time)");
            return nullptr;
        }
        if (g_abandoned) {
            say(err, errlen, "a camera was abandoned in this process (it stopped delivering): libcamera "
                             "cannot start another camera manager until the process exits");
            return nullptr;
        }
        quiet_logging();
        c = new kiosk_lc();
        if (!open_camera(c, camera, width, height, fps, info, err, errlen)) {
            c->teardown();  // never started: nothing is in the pipeline
            delete c;
            return nullptr;
        }
        g_open = c;
        return c;
    } catch (const std::exception &e) {
        say(err, errlen, "libcamera: %s", e.what());
    } catch (...) {
        say(err, errlen, "libcamera: an exception");
    }
    // An exception half way: whatever was made stays (tearing down a half-made camera could
    // throw or assert again); the process can still exit cleanly.
    if (c) g_abandoned = true;
    return nullptr;
}

KIOSK_LCP_EXPORT int kiosk_lcp_start(kiosk_lc *c, const struct kiosk_lc_control *controls, int32_t count, char *err,
                                     size_t errlen) {
    if (!c) {
        say(err, errlen, "no camera");
        return -1;
    }
    if (c->started || c->connected) {
        say(err, errlen, "the camera was started already (after a failed start only close is left)");
        return -1;
    }
    try {
        // A failure leaves the camera for close, which stops it if it got as far as started.
        return start_camera(c, controls, count, err, errlen) ? 0 : -1;
    } catch (const std::exception &e) {
        say(err, errlen, "libcamera: %s", e.what());
    } catch (...) {
        say(err, errlen, "libcamera: an exception");
    }
    return -1;
}

KIOSK_LCP_EXPORT int kiosk_lcp_set_controls(kiosk_lc *c, const struct kiosk_lc_control *controls, int32_t count,
                                            char *err, size_t errlen) {
    if (!c) {
        say(err, errlen, "no camera");
        return -1;
    }
    try {
        ControlValues values;
        if (!to_values(c->camera->controls(), controls, count, &values, err, errlen)) return -1;
        c->per_request = std::move(values);
        return 0;
    } catch (const std::exception &e) {
        say(err, errlen, "libcamera: %s", e.what());
    } catch (...) {
        say(err, errlen, "libcamera: an exception");
    }
    return -1;
}

KIOSK_LCP_EXPORT int kiosk_lcp_set_crop(kiosk_lc *c, struct kiosk_lc_rect r, char *err, size_t errlen) {
    if (!c) {
        say(err, errlen, "no camera");
        return -1;
    }
    if (!c->has_crop_control) {
        say(err, errlen, "the camera has no ScalerCrop control");
        return -1;
    }
    if (r.width <= 0 || r.height <= 0) {
        say(err, errlen, "crop %dx%d is empty", r.width, r.height);
        return -1;
    }
    if (c->has_crop_maximum) {
        const Rectangle &m = c->crop_maximum;
        if (r.x < m.x || r.y < m.y || (int64_t)r.x + r.width > (int64_t)m.x + m.width ||
            (int64_t)r.y + r.height > (int64_t)m.y + m.height) {
            say(err, errlen, "crop (%d,%d)/%dx%d is outside the maximum (%d,%d)/%ux%u", r.x, r.y, r.width,
                r.height, m.x, m.y, m.width, m.height);
            return -1;
        }
    }
    c->crop = Rectangle(r.x, r.y, (unsigned int)r.width, (unsigned int)r.height);
    c->crop_set = true;
    return 0;
}

KIOSK_LCP_EXPORT int kiosk_lcp_next(kiosk_lc *c, int32_t timeout_ms, struct kiosk_lc_frame *frame, char *err,
                                    size_t errlen) {
    if (!c || !frame) {
        say(err, errlen, "no camera");
        return KIOSK_LC_ERROR;
    }
    if (!c->started) {
        say(err, errlen, "the camera is not started");
        return KIOSK_LC_ERROR;
    }
    try {
        if (c->held) {
            Request *r = c->held;
            c->held = nullptr;
            c->sync(r, DMA_BUF_SYNC_END);
            pthread_mutex_lock(&c->mu);
            bool gone = c->disconnected;
            pthread_mutex_unlock(&c->mu);
            if (gone) {
                say(err, errlen, "camera disconnected");
                return KIOSK_LC_ERROR;
            }
            if (c->queue(r, err, errlen) < 0) return KIOSK_LC_ERROR;
        }
        struct timespec deadline;
        clock_gettime(CLOCK_MONOTONIC, &deadline);
        int64_t ms = timeout_ms < 0 ? 0 : timeout_ms;
        deadline.tv_sec += ms / 1000;
        deadline.tv_nsec += (ms % 1000) * 1000000;
        if (deadline.tv_nsec >= 1000000000) {
            deadline.tv_sec++;
            deadline.tv_nsec -= 1000000000;
        }
        pthread_mutex_lock(&c->mu);
        while (c->done.empty() && !c->disconnected) {
            if (pthread_cond_timedwait(&c->cv, &c->mu, &deadline) == ETIMEDOUT) break;
        }
        if (c->disconnected) {
            pthread_mutex_unlock(&c->mu);
            say(err, errlen, "camera disconnected");
            return KIOSK_LC_ERROR;
        }
        if (c->done.empty()) {
            pthread_mutex_unlock(&c->mu);
            return KIOSK_LC_TIMEOUT;
        }
        Request *r = c->done.front();
        c->done.pop_front();
        pthread_mutex_unlock(&c->mu);

        c->held = r;  // given back (requeued) at the next call, whatever happens now
        FrameBuffer *fb = r->findBuffer(c->stream);
        if (!fb) {
            say(err, errlen, "a completed request without the stream's buffer");
            return KIOSK_LC_ERROR;
        }
        const FrameMetadata &fm = fb->metadata();
        if (fm.status != FrameMetadata::FrameSuccess) {
            say(err, errlen, "frame %u %s", fm.sequence, fm.status == FrameMetadata::FrameError ? "failed" : "cancelled");
            return KIOSK_LC_ERROR;
        }
        auto it = c->buffers.find(fb);
        if (it == c->buffers.end() || !it->second.plane0) {
            say(err, errlen, "a completed request with an unknown buffer");
            return KIOSK_LC_ERROR;
        }
        c->sync(r, DMA_BUF_SYNC_START);

        memset(frame, 0, sizeof *frame);
        frame->luma = it->second.plane0 + c->luma->offset;
        frame->width = c->width;
        frame->height = c->height;
        frame->row_stride = c->row_stride;
        frame->pixel_stride = c->luma->pixel_stride;
        frame->sequence = fm.sequence;
        const ControlList &md = r->metadata();
        std::optional<int64_t> ts = md.get(controls::SensorTimestamp);
        frame->timestamp_ns = ts ? (uint64_t)*ts : fm.timestamp;
        if (std::optional<int32_t> v = md.get(controls::ExposureTime)) {
            frame->has_exposure = 1;
            frame->exposure_us = *v;
        }
        if (std::optional<float> v = md.get(controls::AnalogueGain)) {
            frame->has_gain = 1;
            frame->analogue_gain = *v;
        }
        if (std::optional<float> v = md.get(controls::Lux)) {
            frame->has_lux = 1;
            frame->lux = *v;
        }
        if (std::optional<Rectangle> v = md.get(controls::ScalerCrop)) {
            frame->has_crop = 1;
            frame->crop = {v->x, v->y, (int32_t)v->width, (int32_t)v->height};
        }
        if (std::optional<float> v = md.get(controls::LensPosition)) {
            frame->has_lens_position = 1;
            frame->lens_position = *v;
        }
        if (std::optional<int32_t> v = md.get(controls::AfState)) {
            frame->has_af_state = 1;
            frame->af_state = *v;
        }
        if (std::optional<int32_t> v = md.get(controls::FocusFoM)) {
            frame->has_focus_fom = 1;
            frame->focus_fom = *v;
        }
        return KIOSK_LC_FRAME;
    } catch (const std::exception &e) {
        say(err, errlen, "libcamera: %s", e.what());
    } catch (...) {
        say(err, errlen, "libcamera: an exception");
    }
    return KIOSK_LC_ERROR;
}

KIOSK_LCP_EXPORT int kiosk_lcp_close(kiosk_lc *c, int stalled) {
    if (!c) return KIOSK_LC_CLOSED;
    try {
        std::lock_guard<std::mutex> guard(g_lock);
        if (g_open == c) g_open = nullptr;
        if (must_abandon(c, stalled)) {
            abandon(c);
            return KIOSK_LC_ABANDONED;
        }
        pthread_mutex_lock(&c->mu);
        c->ignoring = true;
        pthread_mutex_unlock(&c->mu);
        if (c->started) {
            int ret = c->camera->stop();
            c->started = false;
            pthread_mutex_lock(&c->mu);
            bool pending = c->outstanding > 0;
            pthread_mutex_unlock(&c->mu);
            // A disconnected camera refuses stop() (-ENODEV); with nothing pending that is fine.
            if (ret < 0 && pending) {
                abandon(c);
                return KIOSK_LC_ABANDONED;
            }
        }
        c->teardown();
        delete c;
        return KIOSK_LC_CLOSED;
    } catch (...) {
        g_abandoned = true;
        return KIOSK_LC_ABANDONED;
    }
}
