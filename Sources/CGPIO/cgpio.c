#include "cgpio.h"

#include <errno.h>
#include <gpiod.h>
#include <stdio.h>

/* libgpiod v1: a line handle belongs to its chip and is released, not freed. */
struct kiosk_gpio_chip;
struct kiosk_gpio_line;

static struct gpiod_chip *chip_of(kiosk_gpio_chip *chip) { return (struct gpiod_chip *)chip; }
static struct gpiod_line *line_of(kiosk_gpio_line *line) { return (struct gpiod_line *)line; }

kiosk_gpio_chip *kiosk_gpio_chip_open(const char *descr) {
    errno = 0;
    struct gpiod_chip *chip = gpiod_chip_open_lookup(descr);
    if (!chip && errno == 0) errno = ENOENT;
    return (kiosk_gpio_chip *)chip;
}

void kiosk_gpio_chip_close(kiosk_gpio_chip *chip) {
    if (chip) gpiod_chip_close(chip_of(chip));
}

const char *kiosk_gpio_chip_name(kiosk_gpio_chip *chip) { return gpiod_chip_name(chip_of(chip)); }
const char *kiosk_gpio_chip_label(kiosk_gpio_chip *chip) { return gpiod_chip_label(chip_of(chip)); }
unsigned int kiosk_gpio_chip_num_lines(kiosk_gpio_chip *chip) { return gpiod_chip_num_lines(chip_of(chip)); }

int kiosk_gpio_chip_find_line(kiosk_gpio_chip *chip, const char *name) {
    errno = 0;
    struct gpiod_line *line = gpiod_chip_find_line(chip_of(chip), name);
    if (!line) {
        if (errno == 0) errno = ENOENT;
        return -1;
    }
    return (int)gpiod_line_offset(line);
}

int kiosk_gpio_line_info(kiosk_gpio_chip *chip, unsigned int offset,
                         const char **name, const char **consumer, int *used) {
    struct gpiod_line *line = gpiod_chip_get_line(chip_of(chip), offset);
    if (!line) return -1;
    if (gpiod_line_update(line) < 0) return -1;
    *name = gpiod_line_name(line);
    *consumer = gpiod_line_consumer(line);
    *used = gpiod_line_is_used(line) ? 1 : 0;
    return 0;
}

kiosk_gpio_line *kiosk_gpio_line_request_output(kiosk_gpio_chip *chip, unsigned int offset,
                                                const char *consumer, int level) {
    struct gpiod_line *line = gpiod_chip_get_line(chip_of(chip), offset);
    if (!line) return NULL;
    if (gpiod_line_request_output(line, consumer, level ? 1 : 0) < 0) return NULL;
    return (kiosk_gpio_line *)line;
}

int kiosk_gpio_line_set(kiosk_gpio_line *line, int level) {
    return gpiod_line_set_value(line_of(line), level ? 1 : 0);
}

void kiosk_gpio_line_release(kiosk_gpio_line *line) {
    if (line) gpiod_line_release(line_of(line));
}

const char *kiosk_gpio_library_version(void) {
    static char version[64];
    snprintf(version, sizeof version, "libgpiod %s (v1 API)", gpiod_version_string());
    return version;
}
