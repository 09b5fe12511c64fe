// SPDX-License-Identifier: Apache-2.0
/* vmtool: the few things the VM's busybox shell cannot do precisely. Built static on the host.
 *   vmtool ms                      monotonic milliseconds (for timing a stop)
 *   vmtool sample FILE MS          poll FILE (a gpio-sim sysfs value) every 0.5 ms for MS ms;
 *                                  print "T VALUE" at the start and at each change (T in ms)
 *   vmtool exit N                  write N to QEMU's isa-debug-exit port 0xf4 (QEMU exits 2N+1)
 *   vmtool bounce FILE A B US      write A to FILE, then B about US microseconds later (a contact
 *                                  bouncing, through gpio-sim's `pull`); print the gap in us
 *   vmtool yuyv2pgm IN W H OUT     the last whole WxH YUYV frame of IN (frames back to back, as
 *                                  v4l2-ctl --stream-to writes them) as a PGM of its luma, for
 *                                  kiosk decode; prints the number of whole frames in IN
 *   vmtool ctrl DEV ID [VALUE]     VIDIOC_G_CTRL (print the value) or VIDIOC_S_CTRL of control ID
 *                                  (decimal or 0x...) on DEV: one control per call, as the kiosk
 *                                  sets them (v4l2-ctl -c uses VIDIOC_S_EXT_CTRLS, which uvcvideo
 *                                  checks itself); on failure "errno N: message", exit 1
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>
#include <errno.h>
#include <sys/io.h>
#include <sys/ioctl.h>
#include <linux/videodev2.h>

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int read_value(const char *path) {
    char buf[8] = {0};
    int fd = open(path, O_RDONLY);
    if (fd < 0) return -1;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    return n > 0 ? buf[0] - '0' : -1;
}

int main(int argc, char **argv) {
    if (argc >= 2 && !strcmp(argv[1], "ms")) {
        printf("%.0f\n", now_ms());
        return 0;
    }
    if (argc == 4 && !strcmp(argv[1], "sample")) {
        double start = now_ms(), end = start + atof(argv[3]);
        int last = -2;
        setvbuf(stdout, NULL, _IOLBF, 0);
        for (double t = start; t < end; t = now_ms()) {
            int v = read_value(argv[2]);
            if (v != last) { printf("%.1f %d\n", t - start, v); last = v; }
            struct timespec d = {0, 500000};
            nanosleep(&d, NULL);
        }
        printf("%.1f end\n", now_ms() - start);
        return 0;
    }
    if (argc == 3 && !strcmp(argv[1], "exit")) {
        if (ioperm(0xf4, 4, 1) != 0) { perror("ioperm"); return 1; }
        outb((unsigned char)atoi(argv[2]), 0xf4);
        sleep(5); /* QEMU has exited by now unless the device is missing */
        fprintf(stderr, "vmtool: isa-debug-exit did not stop QEMU\n");
        return 1;
    }
    if (argc == 6 && !strcmp(argv[1], "bounce")) {
        int fd = open(argv[2], O_WRONLY);
        if (fd < 0) { perror(argv[2]); return 1; }
        if (write(fd, argv[3], strlen(argv[3])) < 0) { perror("write"); return 1; }
        double t0 = now_ms();
        struct timespec d = {0, atol(argv[5]) * 1000};
        nanosleep(&d, NULL);
        lseek(fd, 0, SEEK_SET);
        if (write(fd, argv[4], strlen(argv[4])) < 0) { perror("write"); return 1; }
        printf("%.0f\n", (now_ms() - t0) * 1000);
        close(fd);
        return 0;
    }
    if (argc == 6 && !strcmp(argv[1], "yuyv2pgm")) {
        long w = atol(argv[3]), h = atol(argv[4]), size = w * h * 2;
        FILE *in = fopen(argv[2], "rb");
        if (!in || size <= 0) { perror(argv[2]); return 1; }
        fseek(in, 0, SEEK_END);
        long n = ftell(in) / size;
        if (n == 0) { printf("0\n"); return 1; }
        unsigned char *f = malloc(size);
        fseek(in, (n - 1) * size, SEEK_SET);
        if (fread(f, 1, size, in) != (size_t)size) { perror("read"); return 1; }
        FILE *out = fopen(argv[5], "wb");
        if (!out) { perror(argv[5]); return 1; }
        fprintf(out, "P5\n%ld %ld\n255\n", w, h);
        for (long i = 0; i < w * h; i++) fputc(f[2 * i], out);
        fclose(out);
        printf("%ld\n", n);
        return 0;
    }
    if ((argc == 4 || argc == 5) && !strcmp(argv[1], "ctrl")) {
        int fd = open(argv[2], O_RDWR);
        if (fd < 0) { perror(argv[2]); return 1; }
        struct v4l2_control c = {.id = strtoul(argv[3], NULL, 0)};
        if (argc == 5) c.value = atoi(argv[4]);
        if (ioctl(fd, argc == 5 ? VIDIOC_S_CTRL : VIDIOC_G_CTRL, &c) < 0) {
            printf("errno %d: %s\n", errno, strerror(errno));
            return 1;
        }
        if (argc == 4) printf("%d\n", c.value);
        return 0;
    }
    fprintf(stderr, "usage: vmtool ms | sample FILE MS | exit N | bounce FILE A B US | yuyv2pgm IN W H OUT | ctrl DEV ID [VALUE]\n");
    return 64;
}
