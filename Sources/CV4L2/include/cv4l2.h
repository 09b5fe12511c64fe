// SPDX-License-Identifier: Apache-2.0
/* A thin shim over libv4l2 for Swift. No policy lives here.
 *
 * Why it exists: the VIDIOC_* request codes and v4l2_fourcc() are function-like macros that
 * Swift cannot import, and v4l2_open()/v4l2_ioctl() are variadic, which Swift cannot call.
 * Including the headers here also makes the videodev2 structs and enums visible to Swift.
 */
#ifndef KIOSK_CV4L2_H
#define KIOSK_CV4L2_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/mman.h>
#include <linux/videodev2.h>
#include <libv4l2.h>

/* v4l2_open with no mode argument (a device is never created). -1 and errno on failure. */
int kiosk_v4l2_open(const char *path, int flags);
int kiosk_v4l2_close(int fd);
/* v4l2_ioctl with one pointer argument. -1 and errno on failure, EINTR included. */
int kiosk_v4l2_ioctl(int fd, unsigned long request, void *arg);
/* v4l2_mmap as is: returns MAP_FAILED ((void *)-1) and errno on failure. */
void *kiosk_v4l2_mmap(void *start, size_t length, int prot, int flags, int fd, int64_t offset);
int kiosk_v4l2_munmap(void *start, size_t length);

/* v4l2_fourcc(a, b, c, d): a pixel format code from its four characters. */
uint32_t kiosk_v4l2_fourcc(unsigned char a, unsigned char b, unsigned char c, unsigned char d);

/* The controls the brightness estimate reads, from the kernel's headers (V4L2_CID_* are built
 * from macros Swift does not import). */
extern const uint32_t KIOSK_V4L2_CID_EXPOSURE_ABSOLUTE;
extern const uint32_t KIOSK_V4L2_CID_GAIN;
/* The focus and exposure controls the kiosk sets (KIOSK_FOCUS, KIOSK_EXPOSURE, KIOSK_MAINS_HZ),
 * by id: newer kernels renamed some of them. */
extern const uint32_t KIOSK_V4L2_CID_FOCUS_AUTO;
extern const uint32_t KIOSK_V4L2_CID_FOCUS_ABSOLUTE;
extern const uint32_t KIOSK_V4L2_CID_AUTO_FOCUS_RANGE;
extern const uint32_t KIOSK_V4L2_CID_EXPOSURE_AUTO_PRIORITY;
extern const uint32_t KIOSK_V4L2_CID_BACKLIGHT_COMPENSATION;
extern const uint32_t KIOSK_V4L2_CID_POWER_LINE_FREQUENCY;

/* The request codes, as plain constants. */
extern const unsigned long KIOSK_VIDIOC_QUERYCAP;
extern const unsigned long KIOSK_VIDIOC_ENUM_FMT;
extern const unsigned long KIOSK_VIDIOC_G_FMT;
extern const unsigned long KIOSK_VIDIOC_S_FMT;
extern const unsigned long KIOSK_VIDIOC_REQBUFS;
extern const unsigned long KIOSK_VIDIOC_QUERYBUF;
extern const unsigned long KIOSK_VIDIOC_QBUF;
extern const unsigned long KIOSK_VIDIOC_DQBUF;
extern const unsigned long KIOSK_VIDIOC_STREAMON;
extern const unsigned long KIOSK_VIDIOC_STREAMOFF;
extern const unsigned long KIOSK_VIDIOC_G_PARM;
extern const unsigned long KIOSK_VIDIOC_S_PARM;
extern const unsigned long KIOSK_VIDIOC_ENUM_FRAMESIZES;
extern const unsigned long KIOSK_VIDIOC_ENUM_FRAMEINTERVALS;
extern const unsigned long KIOSK_VIDIOC_QUERYCTRL;
extern const unsigned long KIOSK_VIDIOC_G_CTRL;
extern const unsigned long KIOSK_VIDIOC_S_CTRL;

#endif
