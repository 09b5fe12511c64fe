// SPDX-License-Identifier: Apache-2.0
/* A thin shim over libgpiod: the only place that knows which libgpiod API the kiosk talks to.
 * Both are supported, chosen at build time from the installed <gpiod.h>: v1 (libgpiod 1.6,
 * Debian 12 bookworm) and v2 (libgpiod 2.x, Debian 13 trixie). Nothing above this file knows
 * which one it is.
 *
 * Levels are physical (0 low, 1 high) in both directions. An active-low line is requested with
 * the library's own active-low flag, so `gpioinfo` shows it as active-low while the kiosk holds it;
 * the shim turns the physical level it is given into the logical value the library expects.
 * Functions that fail return NULL or -1 and leave errno set. */
#ifndef KIOSK_CGPIO_H
#define KIOSK_CGPIO_H

typedef struct kiosk_gpio_chip kiosk_gpio_chip;
typedef struct kiosk_gpio_line kiosk_gpio_line;

/* Opens a chip by name ("gpiochip0"), path ("/dev/gpiochip0"), label ("pinctrl-rp1") or number. */
kiosk_gpio_chip *kiosk_gpio_chip_open(const char *name_path_label_or_number);
void kiosk_gpio_chip_close(kiosk_gpio_chip *chip);
const char *kiosk_gpio_chip_name(kiosk_gpio_chip *chip);
const char *kiosk_gpio_chip_label(kiosk_gpio_chip *chip);
unsigned int kiosk_gpio_chip_num_lines(kiosk_gpio_chip *chip);

/* The offset of the line with this name, or -1 (errno ENOENT when there is none). */
int kiosk_gpio_chip_find_line(kiosk_gpio_chip *chip, const char *name);

/* What the kernel says of a line now: its name and consumer (NULL when unnamed / unused,
 * valid until the next call for this chip) and whether anyone holds it. 0, or -1. */
int kiosk_gpio_line_info(kiosk_gpio_chip *chip, unsigned int offset,
                         const char **name, const char **consumer, int *used);

/* Requests the line as an output under `consumer`, driven at the physical `level` from the first
 * instant; `active_low` marks it active-low in the kernel (what `gpioinfo` shows). */
kiosk_gpio_line *kiosk_gpio_line_request_output(kiosk_gpio_chip *chip, unsigned int offset,
                                                const char *consumer, int active_low, int level);
/* Drives the physical level (0 or 1). */
int kiosk_gpio_line_set(kiosk_gpio_line *line, int level);
void kiosk_gpio_line_release(kiosk_gpio_line *line);

/* "libgpiod 1.6.3 (v1 API)" or "libgpiod 2.2.1 (v2 API)" */
const char *kiosk_gpio_library_version(void);
/* 1 or 2: the API this shim was built against. */
int kiosk_gpio_api(void);

/* ---- Inputs (issue 25): the door contact, the exit button, the tamper loop. ---------------------
 * A line requested as an input with both edges reported, the kernel's timestamp on each edge
 * (CLOCK_MONOTONIC, the clock the kiosk's own timers use), and a bias. Levels are physical, as for
 * outputs: an edge says the level the line went to. `debounce_us` is asked of the kernel where the
 * API has it (v2: the kernel debounces, in hardware or in its own software debouncer);
 * `*kernel_debounced` says whether it was (0 on v1: the caller debounces). */
typedef struct kiosk_gpio_input kiosk_gpio_input;

enum {
    KIOSK_GPIO_BIAS_AS_IS = 0,
    KIOSK_GPIO_BIAS_PULL_UP = 1,
    KIOSK_GPIO_BIAS_PULL_DOWN = 2,
    KIOSK_GPIO_BIAS_DISABLED = 3,
};

/* `falls_only`: only the line's physical falls are events (a Wiegand line's pulses), their type
 * fixed by the request; else both edges, whose type the kernel reads from the line's level when
 * its interrupt thread runs (a pulse shorter than that thread's delay is then misreported). */
kiosk_gpio_input *kiosk_gpio_line_request_input(kiosk_gpio_chip *chip, unsigned int offset, const char *consumer,
                                                int active_low, int bias, unsigned int debounce_us,
                                                int falls_only, int *kernel_debounced);
/* The descriptor that is readable when edges wait (for poll(2)). */
int kiosk_gpio_input_fd(kiosk_gpio_input *input);
/* The physical level now (0 or 1), or -1. */
int kiosk_gpio_input_level(kiosk_gpio_input *input);
/* Reads up to `max` waiting edges (call when the descriptor is readable: it blocks otherwise):
 * each one's kernel timestamp (ns, CLOCK_MONOTONIC) and the physical level it went to. Returns
 * how many, or -1. */
int kiosk_gpio_input_read_edges(kiosk_gpio_input *input, unsigned long long *timestamps_ns, int *levels, int max);
void kiosk_gpio_input_release(kiosk_gpio_input *input);

#endif
