// SPDX-License-Identifier: Apache-2.0
/*
 * controls-check: the plugin's control handling against the libcamera of this machine, without a
 * camera (`make check`). It builds the plugin's source in, gives it the ControlInfoMap a Camera
 * Module 3 (imx708) advertises through the Raspberry Pi pipeline (its IPA's control tables:
 * src/ipa/rpi/common/ipa_base.cpp, LensPosition's range from the imx708 tuning's map) and one
 * without a lens (Module 2), and checks with libcamera's own types what the kiosk's controls
 * become: the advertised list, the values of Camera::start()'s list (AfWindows an array of
 * Rectangle, LensPosition a float, AfMode an int32), and the refusals, each naming the control.
 * Prints "ok NAME" or "FAIL NAME: why" per check, then "N passed, M failed"; exit 1 on a failure.
 */
#include "kiosk_libcamera.cpp"

namespace {

int passed = 0, failed = 0;

void check(bool ok, const char *name, const std::string &why = "") {
    if (ok) {
        passed++;
        printf("ok %s\n", name);
    } else {
        failed++;
        printf("FAIL %s: %s\n", name, why.c_str());
    }
}

struct kiosk_lc_control control(const char *name, int32_t type) {
    struct kiosk_lc_control c;
    memset(&c, 0, sizeof c);
    snprintf(c.name, sizeof c.name, "%s", name);
    c.type = type;
    return c;
}

const struct kiosk_lc_control_offer *offer(const struct kiosk_lc_info &info, const char *name) {
    for (int i = 0; i < info.offer_count; i++)
        if (!strcmp(info.offers[i].name, name)) return &info.offers[i];
    return nullptr;
}

// The imx708's controls as the Raspberry Pi IPA lists them (those the kiosk touches, and a few
// beside them).
ControlInfoMap imx708() {
    ControlInfoMap::Map map = {
        {&controls::AeEnable, ControlInfo(false, true)},
        {&controls::AeMeteringMode, ControlInfo(controls::AeMeteringModeValues)},
        {&controls::AeConstraintMode, ControlInfo(controls::AeConstraintModeValues)},
        {&controls::AeExposureMode, ControlInfo(controls::AeExposureModeValues)},
        {&controls::ExposureTime, ControlInfo(1, 66666)},
        {&controls::ScalerCrop, ControlInfo(Rectangle{}, Rectangle(65535, 65535, 65535, 65535), Rectangle{})},
        {&controls::FrameDurationLimits, ControlInfo(INT64_C(33333), INT64_C(120000))},
        {&controls::AfMode, ControlInfo(controls::AfModeValues)},
        {&controls::AfRange, ControlInfo(controls::AfRangeValues)},
        {&controls::AfSpeed, ControlInfo(controls::AfSpeedValues)},
        {&controls::AfMetering, ControlInfo(controls::AfMeteringValues)},
        {&controls::AfWindows, ControlInfo(Rectangle{}, Rectangle(65535, 65535, 65535, 65535), Rectangle{})},
        {&controls::AfTrigger, ControlInfo(controls::AfTriggerValues)},
        {&controls::LensPosition, ControlInfo(0.0f, 15.0f, 1.0f)},
    };
    return ControlInfoMap(std::move(map), controls::controls);
}

// A Camera Module 2 (imx219): no lens motor.
ControlInfoMap imx219() {
    ControlInfoMap::Map map = {
        {&controls::AeMeteringMode, ControlInfo(controls::AeMeteringModeValues)},
        {&controls::AeConstraintMode, ControlInfo(controls::AeConstraintModeValues)},
        {&controls::AeExposureMode, ControlInfo(controls::AeExposureModeValues)},
        {&controls::ScalerCrop, ControlInfo(Rectangle{}, Rectangle(65535, 65535, 65535, 65535), Rectangle{})},
    };
    return ControlInfoMap(std::move(map), controls::controls);
}

}  // namespace

int main() {
    printf("libcamera %d.%d.%d\n", LIBCAMERA_VERSION_MAJOR, LIBCAMERA_VERSION_MINOR, LIBCAMERA_VERSION_PATCH);
    ControlInfoMap lensed = imx708();
    struct kiosk_lc_info info;
    memset(&info, 0, sizeof info);
    describe_controls(lensed, &info);
    check(info.offer_count == 14 && info.offers_left_out == 0, "advertised: all 14",
          std::to_string(info.offer_count) + " listed, " + std::to_string(info.offers_left_out) + " left out");
    bool rising = true;
    for (int i = 1; i < info.offer_count; i++) {
        unsigned int before = 0, now = 0;
        for (const auto &e : lensed) {
            if (e.first->name() == info.offers[i - 1].name) before = e.first->id();
            if (e.first->name() == info.offers[i].name) now = e.first->id();
        }
        if (before >= now) rising = false;
    }
    check(rising, "advertised: by rising id");
    const struct kiosk_lc_control_offer *lens = offer(info, "LensPosition");
    check(lens && lens->type == KIOSK_LC_FLOAT && lens->numeric && lens->min == 0 && lens->max == 15 && lens->has_def &&
              lens->def == 1,
          "advertised: LensPosition float 0-15, default 1");
    const struct kiosk_lc_control_offer *mode = offer(info, "AfMode");
    // An enum's ControlInfo from its values: min and max the first and last; libcamera makes the
    // first the default when none is given.
    check(mode && mode->type == KIOSK_LC_INT && mode->numeric && mode->min == 0 && mode->max == 2 &&
              (!mode->has_def || mode->def == 0),
          "advertised: AfMode int 0-2 (an enum as its range)");
    const struct kiosk_lc_control_offer *windows = offer(info, "AfWindows");
    check(windows && windows->type == KIOSK_LC_RECTANGLES && !windows->numeric, "advertised: AfWindows rectangles, no numbers");
    const struct kiosk_lc_control_offer *ae = offer(info, "AeEnable");
    check(ae && ae->type == KIOSK_LC_OTHER && ae->numeric && ae->max == 1, "advertised: AeEnable other (bool), 0-1");
    const struct kiosk_lc_control_offer *limits = offer(info, "FrameDurationLimits");
    check(limits && limits->type == KIOSK_LC_INT && limits->numeric && limits->min == 33333 && limits->max == 120000,
          "advertised: FrameDurationLimits int64 as numbers");

    // What LibcameraControls.atStart gives for KIOSK_FOCUS=auto and KIOSK_EXPOSURE=screens.
    std::vector<struct kiosk_lc_control> kiosk;
    struct kiosk_lc_control c = control("AfMode", KIOSK_LC_INT);
    c.i = controls::AfModeContinuous;
    kiosk.push_back(c);
    c = control("LensPosition", KIOSK_LC_FLOAT);
    c.f = 100.0f / 15;
    kiosk.push_back(c);
    c = control("AfWindows", KIOSK_LC_RECTANGLES);
    c.count = 2;
    c.rects[0] = {1152, 648, 2304, 1296};
    c.rects[1] = {10, 20, 30, 40};
    kiosk.push_back(c);
    c = control("AeConstraintMode", KIOSK_LC_INT);
    c.i = controls::ConstraintHighlight;
    kiosk.push_back(c);
    ControlValues values;
    char err[256] = "";
    bool ok = to_values(lensed, kiosk.data(), (int32_t)kiosk.size(), &values, err, sizeof err);
    check(ok && values.size() == 4, "an imx708 takes the kiosk's controls", err);
    if (ok && values.size() == 4) {
        ControlList start(lensed);
        for (const auto &v : values) start.set(v.first, v.second);
        std::optional<int32_t> m = start.get(controls::AfMode);
        check(m && *m == controls::AfModeContinuous, "AfMode in the start list is the int32 2");
        std::optional<float> p = start.get(controls::LensPosition);
        check(p && *p == 100.0f / 15, "LensPosition in the start list is the float 6.67");
        std::optional<Span<const Rectangle>> w = start.get(controls::AfWindows);
        check(w && w->size() == 2 && (*w)[0] == Rectangle(1152, 648, 2304, 1296) && (*w)[1] == Rectangle(10, 20, 30, 40),
              "AfWindows in the start list is an array of the 2 rectangles");
        std::optional<int32_t> k = start.get(controls::AeConstraintMode);
        check(k && *k == controls::ConstraintHighlight, "AeConstraintMode in the start list is highlight");
    }

    // A one-rectangle control (ScalerCrop) takes one rectangle, not an array.
    c = control("ScalerCrop", KIOSK_LC_RECTANGLES);
    c.count = 1;
    c.rects[0] = {0, 0, 100, 100};
    ok = to_values(lensed, &c, 1, &values, err, sizeof err);
    check(ok && values.size() == 1 && !values[0].second.isArray() && values[0].second.get<Rectangle>() == Rectangle(0, 0, 100, 100),
          "ScalerCrop is given as one Rectangle", err);
    c.count = 2;
    ok = to_values(lensed, &c, 1, &values, err, sizeof err);
    check(!ok && !strcmp(err, "ScalerCrop takes one, given 2 rectangles"), "ScalerCrop refuses two rectangles", err);

    struct Refusal {
        const char *what;
        struct kiosk_lc_control control;
        const char *message;
    };
    struct kiosk_lc_control lens_as_int = control("LensPosition", KIOSK_LC_INT);
    struct kiosk_lc_control mode_as_float = control("AfMode", KIOSK_LC_FLOAT);
    struct kiosk_lc_control limits_one = control("FrameDurationLimits", KIOSK_LC_INT);
    struct kiosk_lc_control ae_enable = control("AeEnable", KIOSK_LC_INT);
    struct kiosk_lc_control five = control("AfWindows", KIOSK_LC_RECTANGLES);
    five.count = 5;
    struct kiosk_lc_control unknown = control("Sharpness", KIOSK_LC_FLOAT);
    Refusal refusals[] = {
        {"a float control given an int", lens_as_int, "LensPosition is a float control, given an integer"},
        {"an int control given a float", mode_as_float, "AfMode is an integer control, given a float"},
        {"an array control given one value", limits_one, "FrameDurationLimits takes an array, given one value"},
        {"a bool control", ae_enable, "AeEnable is a kind the kiosk does not set control, given an integer"},
        {"five AF windows", five, "AfWindows takes 1 to 4, given 5 rectangles"},
        {"a control the camera lacks", unknown, "the camera has no control Sharpness"},
    };
    for (const Refusal &r : refusals) {
        // Behind a good control: the whole list is refused, nothing half given.
        struct kiosk_lc_control list[2] = {kiosk[0], r.control};
        err[0] = 0;
        ok = to_values(lensed, list, 2, &values, err, sizeof err);
        check(!ok && !strcmp(err, r.message), r.what, std::string("\"") + err + "\"");
    }

    // A Camera Module 2: no lens, so any focus control is refused by name.
    ControlInfoMap fixed = imx219();
    memset(&info, 0, sizeof info);
    describe_controls(fixed, &info);
    check(info.offer_count == 4 && !offer(info, "AfMode") && !offer(info, "LensPosition"), "a Module 2 advertises no lens");
    ok = to_values(fixed, kiosk.data(), 1, &values, err, sizeof err);
    check(!ok && !strcmp(err, "the camera has no control AfMode"), "a Module 2 refuses AfMode, named", err);

    // More controls than the info holds: the first by id, the rest counted.
    ControlInfoMap::Map many;
    for (const auto &e : controls::controls) {
        switch (e.second->type()) {
        case ControlTypeBool: many.emplace(e.second, ControlInfo(false, true)); break;
        case ControlTypeByte: many.emplace(e.second, ControlInfo(uint8_t(0), uint8_t(1))); break;
        case ControlTypeInteger32: many.emplace(e.second, ControlInfo(0, 1)); break;
        case ControlTypeInteger64: many.emplace(e.second, ControlInfo(INT64_C(0), INT64_C(1))); break;
        case ControlTypeFloat: many.emplace(e.second, ControlInfo(0.0f, 1.0f)); break;
        case ControlTypeRectangle: many.emplace(e.second, ControlInfo(Rectangle{}, Rectangle{})); break;
        case ControlTypeSize: many.emplace(e.second, ControlInfo(Size{}, Size{})); break;
        default: break;  // strings and the newer kinds: enough without them
        }
    }
    ControlInfoMap all(std::move(many), controls::controls);
    memset(&info, 0, sizeof info);
    describe_controls(all, &info);
    check(info.offer_count == std::min<int>(KIOSK_LC_MAX_OFFERS, (int)all.size() - info.offers_left_out) &&
              info.offer_count + info.offers_left_out == (int)all.size(),
          "every control listed or counted as left out",
          std::to_string(all.size()) + " controls, " + std::to_string(info.offer_count) + " listed, " +
              std::to_string(info.offers_left_out) + " left out");

    printf("info %zu controls in libcamera's list: %d listed, %d left out\n", all.size(), info.offer_count,
           info.offers_left_out);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
