// SPDX-License-Identifier: Apache-2.0
// The zxing-cpp shim: one API for Debian 12's zxing-cpp 1.4.0 and Debian 13's 2.3 (see czxing.h).
// 2.x renamed DecodeHints to ReaderOptions and Result to Barcode (the old names remain, deprecated),
// made text() UTF-8 always (1.4 does so only with ZX_USE_UTF8), turned inverted reading on by
// default (1.4 has none: it is turned off, so both read the same), and added a text mode whose
// plain form is 1.4's text().
//
// 1.4 as Debian builds it keeps its assertions, and one fails (abort) when a linear code is found
// in two layers of its downscaled pyramid (Result::operator== asserts lineCount() == 1; 2.x
// dropped the assertion): a picture whose smaller side reaches the downscale threshold (500
// pixels) has its linear codes read without the pyramid, its matrix codes with it.
#define ZX_USE_UTF8 1
#include "czxing.h"

#if __has_include(<ZXing/Version.h>)
#include <ZXing/Version.h>
#else
#include <ZXing/ZXVersion.h>
#endif
#include <ZXing/ReadBarcode.h>

#include <cstring>
#include <new>
#include <string>
#include <vector>

namespace {

#if ZXING_VERSION_MAJOR >= 2
using Options = ZXing::ReaderOptions;
using Found = ZXing::Barcode;
#else
using Options = ZXing::DecodeHints;
using Found = ZXing::Result;
#endif

struct FormatName {
    uint32_t kiosk;
    ZXing::BarcodeFormat zxing;
};

const FormatName formats[] = {
    {KIOSK_ZX_AZTEC, ZXing::BarcodeFormat::Aztec},
    {KIOSK_ZX_CODABAR, ZXing::BarcodeFormat::Codabar},
    {KIOSK_ZX_CODE39, ZXing::BarcodeFormat::Code39},
    {KIOSK_ZX_CODE93, ZXing::BarcodeFormat::Code93},
    {KIOSK_ZX_CODE128, ZXing::BarcodeFormat::Code128},
    {KIOSK_ZX_DATABAR, ZXing::BarcodeFormat::DataBar},
    {KIOSK_ZX_DATABAR_EXPANDED, ZXing::BarcodeFormat::DataBarExpanded},
    {KIOSK_ZX_DATAMATRIX, ZXing::BarcodeFormat::DataMatrix},
    {KIOSK_ZX_EAN8, ZXing::BarcodeFormat::EAN8},
    {KIOSK_ZX_EAN13, ZXing::BarcodeFormat::EAN13},
    {KIOSK_ZX_ITF, ZXing::BarcodeFormat::ITF},
    {KIOSK_ZX_PDF417, ZXing::BarcodeFormat::PDF417},
    {KIOSK_ZX_QRCODE, ZXing::BarcodeFormat::QRCode},
    {KIOSK_ZX_UPCA, ZXing::BarcodeFormat::UPCA},
    {KIOSK_ZX_UPCE, ZXing::BarcodeFormat::UPCE},
    {KIOSK_ZX_MICROQR, ZXing::BarcodeFormat::MicroQRCode},
};

struct Code {
    uint32_t format;
    std::vector<uint8_t> bytes;
    std::string text;
    bool hasECI;
    int lineCount;
    int x[4], y[4];
};

uint32_t kioskFormat(ZXing::BarcodeFormat f) {
    for (const auto &n : formats)
        if (n.zxing == f) return n.kiosk;
    return 0;
}

void copyName(const std::string &name, char *buffer, size_t size) {
    if (!buffer || size == 0) return;
    size_t n = name.size() < size - 1 ? name.size() : size - 1;
    std::memcpy(buffer, name.data(), n);
    buffer[n] = 0;
}

} // namespace

struct kiosk_zxing_reader {
    Options options;
    /// 1.4: the linear formats without the pyramid, the others with it (see the top).
    Options linearOptions, matrixOptions;
    bool split = false;
    std::vector<Code> codes;
};

extern "C" kiosk_zxing_reader *kiosk_zxing_create(uint32_t wanted, int try_harder, int try_rotate, int min_line_count) {
    auto *reader = new (std::nothrow) kiosk_zxing_reader();
    if (!reader) return nullptr;
    ZXing::BarcodeFormats chosen;
    for (const auto &n : formats)
        if (wanted & n.kiosk) chosen |= n.zxing;
    reader->options.setFormats(chosen);
    reader->options.setTryHarder(try_harder != 0);
    reader->options.setTryRotate(try_rotate != 0);
    reader->options.setMinLineCount(static_cast<uint8_t>(min_line_count < 1 ? 1 : min_line_count > 255 ? 255 : min_line_count));
#if ZXING_VERSION_MAJOR >= 2
    reader->options.setTryInvert(false);
    reader->options.setTextMode(ZXing::TextMode::Plain);
#else
    ZXing::BarcodeFormats linear = chosen & ZXing::BarcodeFormat::LinearCodes;
    ZXing::BarcodeFormats matrix = chosen & ZXing::BarcodeFormat::MatrixCodes;
    reader->linearOptions = reader->options;
    reader->linearOptions.setFormats(linear).setTryDownscale(false);
    reader->matrixOptions = reader->options;
    reader->matrixOptions.setFormats(matrix);
    reader->split = !linear.empty();
#endif
    return reader;
}

extern "C" void kiosk_zxing_destroy(kiosk_zxing_reader *reader) { delete reader; }

extern "C" int kiosk_zxing_read(kiosk_zxing_reader *reader, const uint8_t *data, int width, int height,
                                int row_stride, int pixel_stride) {
    reader->codes.clear();
    if (!data || width <= 0 || height <= 0) return 0;
    try {
        ZXing::ImageView image(data, width, height, ZXing::ImageFormat::Lum, row_stride, pixel_stride);
        std::vector<Found> all;
        const int smaller = width < height ? width : height;
        if (reader->split && reader->options.tryDownscale() && smaller >= reader->options.downscaleThreshold()) {
            all = ZXing::ReadBarcodes(image, reader->linearOptions);
            if (!reader->matrixOptions.formats().empty())
                for (auto &found : ZXing::ReadBarcodes(image, reader->matrixOptions)) all.push_back(std::move(found));
        } else {
            all = ZXing::ReadBarcodes(image, reader->options);
        }
        for (const Found &found : all) {
            if (!found.isValid()) continue;
            Code code;
            code.format = kioskFormat(found.format());
            code.bytes.assign(found.bytes().begin(), found.bytes().end());
            code.text = found.text();
            code.hasECI = found.hasECI();
            code.lineCount = found.lineCount();
            const auto &p = found.position();
            for (int i = 0; i < 4; ++i) {
                code.x[i] = p[i].x;
                code.y[i] = p[i].y;
            }
            reader->codes.push_back(std::move(code));
        }
        return static_cast<int>(reader->codes.size());
    } catch (...) {
        reader->codes.clear();
        return -1;
    }
}

extern "C" int kiosk_zxing_code_at(const kiosk_zxing_reader *reader, int index, kiosk_zxing_code *out) {
    if (index < 0 || static_cast<size_t>(index) >= reader->codes.size()) return 0;
    const Code &c = reader->codes[static_cast<size_t>(index)];
    out->format = c.format;
    out->bytes = c.bytes.data();
    out->length = c.bytes.size();
    out->text = c.text.c_str();
    out->has_eci = c.hasECI ? 1 : 0;
    out->line_count = c.lineCount;
    for (int i = 0; i < 4; ++i) {
        out->x[i] = c.x[i];
        out->y[i] = c.y[i];
    }
    return 1;
}

extern "C" void kiosk_zxing_name(uint32_t format, char *buffer, size_t size) {
    if (format == 0) {
        copyName(std::to_string(ZXING_VERSION_MAJOR) + "." + std::to_string(ZXING_VERSION_MINOR) + "." +
                     std::to_string(ZXING_VERSION_PATCH),
                 buffer, size);
        return;
    }
    for (const auto &n : formats)
        if (n.kiosk == format) {
            copyName(std::string(ZXing::ToString(n.zxing)), buffer, size);
            return;
        }
    copyName("", buffer, size);
}
