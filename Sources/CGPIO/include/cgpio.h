/* A thin shim over libgpiod: the only place that knows which libgpiod API (v1 on Debian 12)
 * the kiosk talks to. Levels are physical (0 low, 1 high); active-low is the caller's policy.
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

/* Requests the line as an output driven at `level`, under `consumer`. */
kiosk_gpio_line *kiosk_gpio_line_request_output(kiosk_gpio_chip *chip, unsigned int offset,
                                                const char *consumer, int level);
int kiosk_gpio_line_set(kiosk_gpio_line *line, int level);
void kiosk_gpio_line_release(kiosk_gpio_line *line);

/* "libgpiod 1.6.3 (v1 API)" */
const char *kiosk_gpio_library_version(void);

#endif
