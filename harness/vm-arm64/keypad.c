// SPDX-License-Identifier: Apache-2.0
/* keypad-wiegand: a Wiegand keypad on two gpio-sim lines, for the arm64 VM tier's keypad group
 * (harness/vm-arm64/keypad.sh). The guest's shell cannot make 100 us pulses: each `echo` to
 * gpio-sim's sysfs `pull` is a process's open, write and close, milliseconds under TCG. This
 * program keeps both `pull` files open and times each pulse on the monotonic clock, spinning
 * between writes (a real keypad's timing: a pulse of 50-100 us, a bit every 1-2 ms).
 *
 *   keypad-wiegand DIR D0 D1 WIDTH PULSE_US BIT_US KEY_MS  <KEYS
 *
 * DIR is gpio-sim's device folder (holding sim_gpioN/pull); D0, D1 the line offsets; WIDTH 4 or 8
 * (bits a key: 4 the value, 8 the value's complement then the value); KEYS one line on standard
 * input (not in argv, where `ps` would show a PIN): 0-9, `*` (10), `#` (11), and `!` for an 8-bit
 * burst whose complement is wrong (noise: the kiosk must refuse it). A key every KEY_MS.
 * A pulse pulls the line down (a Wiegand line idles high), BIT_US after the last pulse's fall.
 *
 * Prints one line, no key: "keys N bits B pulse_us MIN MEDIAN MAX bit_us MIN MEDIAN MAX write_us MAX"
 * as measured here: a pulse from the middle of its down write to the middle of its up write, a bit
 * from one down write's middle to the next one's within a key; write_us the longest write. The
 * kernel's own record of the edges is the irq tracepoint (keypad.sh reads it).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void spin_until(long long t) {
    while (now_ns() < t) { }
}

/* Sleeps until 2 ms before t (between keys: the kiosk has the machine), then spins to t. */
static void wait_until(long long t) {
    long long wake = t - 2000000;
    if (wake > now_ns()) {
        struct timespec ts = {wake / 1000000000LL, wake % 1000000000LL};
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
    }
    spin_until(t);
}

static int open_pull(const char *dir, int line) {
    char path[512];
    snprintf(path, sizeof path, "%s/sim_gpio%d/pull", dir, line);
    int fd = open(path, O_WRONLY);
    if (fd < 0) { fprintf(stderr, "keypad-wiegand: %s: %s\n", path, strerror(errno)); exit(1); }
    return fd;
}

/* One write of "pull-down" or "pull-up"; returns the middle of the write, and keeps the longest. */
static long long max_write_ns;
static long long pull(int fd, int down) {
    const char *v = down ? "pull-down" : "pull-up";
    long long t0 = now_ns();
    if (pwrite(fd, v, strlen(v), 0) < 0) { perror("keypad-wiegand: pull"); exit(1); }
    long long t1 = now_ns();
    if (t1 - t0 > max_write_ns) max_write_ns = t1 - t0;
    return t0 + (t1 - t0) / 2;
}

static int cmp(const void *a, const void *b) {
    long long x = *(const long long *)a, y = *(const long long *)b;
    return x < y ? -1 : x > y;
}

static void stats(const char *name, long long *v, int n) {
    if (n == 0) { printf(" %s_us - - -", name); return; }
    qsort(v, n, sizeof *v, cmp);
    printf(" %s_us %lld %lld %lld", name, v[0] / 1000, v[n / 2] / 1000, v[n - 1] / 1000);
}

int main(int argc, char **argv) {
    if (argc != 8) {
        fprintf(stderr, "usage: keypad-wiegand DIR D0 D1 WIDTH PULSE_US BIT_US KEY_MS <KEYS\n");
        return 64;
    }
    int width = atoi(argv[4]);
    long long pulse = atoll(argv[5]) * 1000, bit = atoll(argv[6]) * 1000, key_gap = atoll(argv[7]) * 1000000;
    if (width != 4 && width != 8) { fprintf(stderr, "keypad-wiegand: WIDTH is 4 or 8\n"); return 64; }
    char keys[64];
    if (!fgets(keys, sizeof keys, stdin)) { fprintf(stderr, "keypad-wiegand: no keys on standard input\n"); return 64; }
    int fd[2] = {open_pull(argv[1], atoi(argv[2])), open_pull(argv[1], atoi(argv[3]))};
    /* KEYPAD_FIFO=N: spin at SCHED_FIFO priority N (below the kernel's irq threads, 50, which
     * must run between two edges to deliver them); unset: an ordinary process. */
    const char *fifo = getenv("KEYPAD_FIFO");
    if (fifo && atoi(fifo) > 0) {
        struct sched_param sp = {.sched_priority = atoi(fifo)};
        if (sched_setscheduler(0, SCHED_FIFO, &sp) != 0) perror("keypad-wiegand: SCHED_FIFO");
    }
    mlockall(MCL_CURRENT | MCL_FUTURE);

    static long long pulses[1024], bits[1024];
    int np = 0, nb = 0, nkeys = 0;
    long long next_key = now_ns();
    for (char *c = keys; *c && *c != '\n'; c++) {
        int v, word, w = width;
        if (*c >= '0' && *c <= '9') v = *c - '0';
        else if (*c == '*') v = 10;
        else if (*c == '#') v = 11;
        else if (*c == '!') v = -1;
        else { fprintf(stderr, "keypad-wiegand: a key is 0-9, *, # or !\n"); return 64; }
        if (v < 0) { w = 8; word = (~5 & 0xF) << 4 | 4; }  /* 5's complement with a 4 */
        else word = w == 8 ? ((~v & 0xF) << 4 | v) : v;
        wait_until(next_key);
        long long start = now_ns(), last_down = 0;
        for (int i = 0; i < w; i++) {
            int one = word >> (w - 1 - i) & 1;
            /* Each pulse BIT_US after the last one's fall as it happened, never sooner: a write
             * that came late does not bring the next bits closer (a keypad never sends them so). */
            if (i > 0) spin_until(last_down + bit);
            long long down = pull(fd[one], 1);
            spin_until(down + pulse);
            long long up = pull(fd[one], 0);
            if (np < 1024) pulses[np++] = up - down;
            if (i > 0 && nb < 1024) bits[nb++] = down - last_down;
            last_down = down;
        }
        nkeys++;
        next_key = start + key_gap;
    }
    printf("keys %d bits %d", nkeys, np);
    stats("pulse", pulses, np);
    stats("bit", bits, nb);
    printf(" write_us %lld\n", max_write_ns / 1000);
    return 0;
}
