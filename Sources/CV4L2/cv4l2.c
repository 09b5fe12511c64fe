// SPDX-License-Identifier: Apache-2.0
#include "cv4l2.h"

int kiosk_v4l2_open(const char *path, int flags) { return v4l2_open(path, flags); }

int kiosk_v4l2_close(int fd) { return v4l2_close(fd); }

int kiosk_v4l2_ioctl(int fd, unsigned long request, void *arg) { return v4l2_ioctl(fd, request, arg); }

void *kiosk_v4l2_mmap(void *start, size_t length, int prot, int flags, int fd, int64_t offset) {
    return v4l2_mmap(start, length, prot, flags, fd, offset);
}

int kiosk_v4l2_munmap(void *start, size_t length) { return v4l2_munmap(start, length); }

uint32_t kiosk_v4l2_fourcc(unsigned char a, unsigned char b, unsigned char c, unsigned char d) {
    return v4l2_fourcc(a, b, c, d);
}

const uint32_t KIOSK_V4L2_CID_EXPOSURE_ABSOLUTE = V4L2_CID_EXPOSURE_ABSOLUTE;
const uint32_t KIOSK_V4L2_CID_GAIN = V4L2_CID_GAIN;
const uint32_t KIOSK_V4L2_CID_FOCUS_AUTO = V4L2_CID_FOCUS_AUTO;
const uint32_t KIOSK_V4L2_CID_FOCUS_ABSOLUTE = V4L2_CID_FOCUS_ABSOLUTE;
const uint32_t KIOSK_V4L2_CID_AUTO_FOCUS_RANGE = V4L2_CID_AUTO_FOCUS_RANGE;
const uint32_t KIOSK_V4L2_CID_EXPOSURE_AUTO_PRIORITY = V4L2_CID_EXPOSURE_AUTO_PRIORITY;
const uint32_t KIOSK_V4L2_CID_BACKLIGHT_COMPENSATION = V4L2_CID_BACKLIGHT_COMPENSATION;
const uint32_t KIOSK_V4L2_CID_POWER_LINE_FREQUENCY = V4L2_CID_POWER_LINE_FREQUENCY;
const unsigned long KIOSK_VIDIOC_QUERYCAP = VIDIOC_QUERYCAP;
const unsigned long KIOSK_VIDIOC_ENUM_FMT = VIDIOC_ENUM_FMT;
const unsigned long KIOSK_VIDIOC_G_FMT = VIDIOC_G_FMT;
const unsigned long KIOSK_VIDIOC_S_FMT = VIDIOC_S_FMT;
const unsigned long KIOSK_VIDIOC_REQBUFS = VIDIOC_REQBUFS;
const unsigned long KIOSK_VIDIOC_QUERYBUF = VIDIOC_QUERYBUF;
const unsigned long KIOSK_VIDIOC_QBUF = VIDIOC_QBUF;
const unsigned long KIOSK_VIDIOC_DQBUF = VIDIOC_DQBUF;
const unsigned long KIOSK_VIDIOC_STREAMON = VIDIOC_STREAMON;
const unsigned long KIOSK_VIDIOC_STREAMOFF = VIDIOC_STREAMOFF;
const unsigned long KIOSK_VIDIOC_G_PARM = VIDIOC_G_PARM;
const unsigned long KIOSK_VIDIOC_S_PARM = VIDIOC_S_PARM;
const unsigned long KIOSK_VIDIOC_ENUM_FRAMESIZES = VIDIOC_ENUM_FRAMESIZES;
const unsigned long KIOSK_VIDIOC_ENUM_FRAMEINTERVALS = VIDIOC_ENUM_FRAMEINTERVALS;
const unsigned long KIOSK_VIDIOC_QUERYCTRL = VIDIOC_QUERYCTRL;
const unsigned long KIOSK_VIDIOC_G_CTRL = VIDIOC_G_CTRL;
const unsigned long KIOSK_VIDIOC_S_CTRL = VIDIOC_S_CTRL;
