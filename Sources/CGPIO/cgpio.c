// SPDX-License-Identifier: Apache-2.0
#include "cgpio.h"

#include <dirent.h>
#include <errno.h>
#include <gpiod.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* v1's header defines GPIOD_LINE_BULK_MAX_LINES; v2 removed line bulks (and the macro). */
#ifdef GPIOD_LINE_BULK_MAX_LINES
#define KIOSK_GPIOD_API 1
#else
#define KIOSK_GPIOD_API 2
#endif

int kiosk_gpio_api(void) { return KIOSK_GPIOD_API; }

/* The physical level for a logical value and back: the same flip either way. */
static int flip(int active_low, int level) { return active_low ? !level : !!level; }

#if KIOSK_GPIOD_API == 1
/* ---- libgpiod v1: a line handle belongs to its chip and is released, not freed. ----------- */

struct kiosk_gpio_chip {
    struct gpiod_chip *chip;
};

struct kiosk_gpio_line {
    struct gpiod_line *line;
    int active_low;
};

kiosk_gpio_chip *kiosk_gpio_chip_open(const char *descr) {
    errno = 0;
    struct gpiod_chip *chip = gpiod_chip_open_lookup(descr);
    if (!chip) {
        if (errno == 0) errno = ENOENT;
        return NULL;
    }
    kiosk_gpio_chip *c = calloc(1, sizeof *c);
    if (!c) {
        gpiod_chip_close(chip);
        errno = ENOMEM;
        return NULL;
    }
    c->chip = chip;
    return c;
}

void kiosk_gpio_chip_close(kiosk_gpio_chip *c) {
    if (!c) return;
    gpiod_chip_close(c->chip);
    free(c);
}

const char *kiosk_gpio_chip_name(kiosk_gpio_chip *c) { return gpiod_chip_name(c->chip); }
const char *kiosk_gpio_chip_label(kiosk_gpio_chip *c) { return gpiod_chip_label(c->chip); }
unsigned int kiosk_gpio_chip_num_lines(kiosk_gpio_chip *c) { return gpiod_chip_num_lines(c->chip); }

int kiosk_gpio_chip_find_line(kiosk_gpio_chip *c, const char *name) {
    errno = 0;
    struct gpiod_line *line = gpiod_chip_find_line(c->chip, name);
    if (!line) {
        if (errno == 0) errno = ENOENT;
        return -1;
    }
    return (int)gpiod_line_offset(line);
}

int kiosk_gpio_line_info(kiosk_gpio_chip *c, unsigned int offset,
                         const char **name, const char **consumer, int *used) {
    struct gpiod_line *line = gpiod_chip_get_line(c->chip, offset);
    if (!line) return -1;
    if (gpiod_line_update(line) < 0) return -1;
    *name = gpiod_line_name(line);
    *consumer = gpiod_line_consumer(line);
    *used = gpiod_line_is_used(line) ? 1 : 0;
    return 0;
}

kiosk_gpio_line *kiosk_gpio_line_request_output(kiosk_gpio_chip *c, unsigned int offset,
                                                const char *consumer, int active_low, int level) {
    struct gpiod_line *line = gpiod_chip_get_line(c->chip, offset);
    if (!line) return NULL;
    kiosk_gpio_line *l = calloc(1, sizeof *l);
    if (!l) {
        errno = ENOMEM;
        return NULL;
    }
    int flags = active_low ? GPIOD_LINE_REQUEST_FLAG_ACTIVE_LOW : 0;
    if (gpiod_line_request_output_flags(line, consumer, flags, flip(active_low, level)) < 0) {
        int e = errno;
        free(l);
        errno = e;
        return NULL;
    }
    l->line = line;
    l->active_low = active_low;
    return l;
}

int kiosk_gpio_line_set(kiosk_gpio_line *l, int level) {
    return gpiod_line_set_value(l->line, flip(l->active_low, level));
}

void kiosk_gpio_line_release(kiosk_gpio_line *l) {
    if (!l) return;
    gpiod_line_release(l->line);
    free(l);
}

const char *kiosk_gpio_library_version(void) {
    static char version[64];
    snprintf(version, sizeof version, "libgpiod %s (v1 API)", gpiod_version_string());
    return version;
}

/* Inputs: v1 has bias flags (1.5 and later) but no debounce: the caller debounces. The kernel
 * stamps v1 line events with CLOCK_MONOTONIC since Linux 5.7. */
struct kiosk_gpio_input {
    struct gpiod_line *line;
    int active_low;
};

kiosk_gpio_input *kiosk_gpio_line_request_input(kiosk_gpio_chip *c, unsigned int offset, const char *consumer,
                                                int active_low, int bias, unsigned int debounce_us,
                                                int falls_only, int *kernel_debounced) {
    (void)debounce_us;
    *kernel_debounced = 0;
    struct gpiod_line *line = gpiod_chip_get_line(c->chip, offset);
    if (!line) return NULL;
    kiosk_gpio_input *in = calloc(1, sizeof *in);
    if (!in) {
        errno = ENOMEM;
        return NULL;
    }
    int flags = active_low ? GPIOD_LINE_REQUEST_FLAG_ACTIVE_LOW : 0;
    switch (bias) {
    case KIOSK_GPIO_BIAS_PULL_UP: flags |= GPIOD_LINE_REQUEST_FLAG_BIAS_PULL_UP; break;
    case KIOSK_GPIO_BIAS_PULL_DOWN: flags |= GPIOD_LINE_REQUEST_FLAG_BIAS_PULL_DOWN; break;
    case KIOSK_GPIO_BIAS_DISABLED: flags |= GPIOD_LINE_REQUEST_FLAG_BIAS_DISABLE; break;
    default: break;
    }
    /* The kernel's edges are of the logical value: an active-low line's physical fall is a rise. */
    int rc = !falls_only ? gpiod_line_request_both_edges_events_flags(line, consumer, flags)
             : active_low ? gpiod_line_request_rising_edge_events_flags(line, consumer, flags)
                          : gpiod_line_request_falling_edge_events_flags(line, consumer, flags);
    if (rc < 0) {
        int e = errno;
        free(in);
        errno = e;
        return NULL;
    }
    in->line = line;
    in->active_low = active_low;
    return in;
}

int kiosk_gpio_input_fd(kiosk_gpio_input *in) { return gpiod_line_event_get_fd(in->line); }

int kiosk_gpio_input_level(kiosk_gpio_input *in) {
    int v = gpiod_line_get_value(in->line);
    return v < 0 ? -1 : flip(in->active_low, v);
}

int kiosk_gpio_input_read_edges(kiosk_gpio_input *in, unsigned long long *timestamps_ns, int *levels, int max) {
    struct gpiod_line_event events[16];
    if (max > 16) max = 16;
    int n = gpiod_line_event_read_multiple(in->line, events, (unsigned int)max);
    for (int i = 0; i < n; i++) {
        timestamps_ns[i] = (unsigned long long)events[i].ts.tv_sec * 1000000000ULL + (unsigned long long)events[i].ts.tv_nsec;
        /* The kernel reports the edge of the logical value (active-low flips it). */
        levels[i] = flip(in->active_low, events[i].event_type == GPIOD_LINE_EVENT_RISING_EDGE);
    }
    return n;
}

void kiosk_gpio_input_release(kiosk_gpio_input *in) {
    if (!in) return;
    gpiod_line_release(in->line);
    free(in);
}

#else
/* ---- libgpiod v2: chips are opened by path only; lines are requested through settings, a line
 * config and a request config, and live in a line request of their own. ---------------------- */

struct kiosk_gpio_chip {
    struct gpiod_chip *chip;
    char name[64];
    char label[64];
    unsigned int num_lines;
    struct gpiod_line_info *info; /* the last line_info's, owning the strings it handed out */
};

struct kiosk_gpio_line {
    struct gpiod_line_request *request;
    unsigned int offset;
    int active_low;
};

static kiosk_gpio_chip *wrap(struct gpiod_chip *chip) {
    struct gpiod_chip_info *info = gpiod_chip_get_info(chip);
    if (!info) {
        int e = errno;
        gpiod_chip_close(chip);
        errno = e;
        return NULL;
    }
    kiosk_gpio_chip *c = calloc(1, sizeof *c);
    if (!c) {
        gpiod_chip_info_free(info);
        gpiod_chip_close(chip);
        errno = ENOMEM;
        return NULL;
    }
    c->chip = chip;
    snprintf(c->name, sizeof c->name, "%s", gpiod_chip_info_get_name(info));
    snprintf(c->label, sizeof c->label, "%s", gpiod_chip_info_get_label(info));
    c->num_lines = (unsigned int)gpiod_chip_info_get_num_lines(info);
    gpiod_chip_info_free(info);
    return c;
}

static struct gpiod_chip *open_path(const char *path) {
    if (!gpiod_is_gpiochip_device(path)) {
        if (errno == 0) errno = ENOENT;
        return NULL;
    }
    return gpiod_chip_open(path);
}

static int is_number(const char *s) {
    if (!*s) return 0;
    for (; *s; s++)
        if (*s < '0' || *s > '9') return 0;
    return 1;
}

/* v2 has no lookup: walk /dev's gpiochips and compare each one's label. */
static struct gpiod_chip *open_by_label(const char *label) {
    struct dirent **entries;
    int n = scandir("/dev", &entries, NULL, alphasort);
    if (n < 0) return NULL;
    struct gpiod_chip *found = NULL;
    for (int i = 0; i < n; i++) {
        char path[300];
        if (!found && strncmp(entries[i]->d_name, "gpiochip", 8) == 0) {
            snprintf(path, sizeof path, "/dev/%s", entries[i]->d_name);
            struct gpiod_chip *chip = open_path(path);
            struct gpiod_chip_info *info = chip ? gpiod_chip_get_info(chip) : NULL;
            if (info && strcmp(gpiod_chip_info_get_label(info), label) == 0) found = chip;
            else if (chip) gpiod_chip_close(chip);
            if (info) gpiod_chip_info_free(info);
        }
        free(entries[i]);
    }
    free(entries);
    return found;
}

kiosk_gpio_chip *kiosk_gpio_chip_open(const char *descr) {
    char path[300];
    struct gpiod_chip *chip = NULL;
    errno = 0;
    if (strchr(descr, '/')) {
        chip = open_path(descr);                     /* a path */
    } else {
        if (is_number(descr)) snprintf(path, sizeof path, "/dev/gpiochip%s", descr);  /* a number */
        else snprintf(path, sizeof path, "/dev/%s", descr);                           /* a name */
        chip = open_path(path);
        if (!chip && !is_number(descr)) chip = open_by_label(descr);                  /* a label */
    }
    if (!chip) {
        if (errno == 0) errno = ENOENT;
        return NULL;
    }
    return wrap(chip);
}

void kiosk_gpio_chip_close(kiosk_gpio_chip *c) {
    if (!c) return;
    if (c->info) gpiod_line_info_free(c->info);
    gpiod_chip_close(c->chip);
    free(c);
}

const char *kiosk_gpio_chip_name(kiosk_gpio_chip *c) { return c->name; }
const char *kiosk_gpio_chip_label(kiosk_gpio_chip *c) { return c->label; }
unsigned int kiosk_gpio_chip_num_lines(kiosk_gpio_chip *c) { return c->num_lines; }

int kiosk_gpio_chip_find_line(kiosk_gpio_chip *c, const char *name) {
    errno = 0;
    int offset = gpiod_chip_get_line_offset_from_name(c->chip, name);
    if (offset < 0 && errno == 0) errno = ENOENT;
    return offset;
}

int kiosk_gpio_line_info(kiosk_gpio_chip *c, unsigned int offset,
                         const char **name, const char **consumer, int *used) {
    struct gpiod_line_info *info = gpiod_chip_get_line_info(c->chip, offset);
    if (!info) return -1;
    if (c->info) gpiod_line_info_free(c->info);
    c->info = info;
    *name = gpiod_line_info_get_name(info);
    *consumer = gpiod_line_info_get_consumer(info);
    *used = gpiod_line_info_is_used(info) ? 1 : 0;
    return 0;
}

kiosk_gpio_line *kiosk_gpio_line_request_output(kiosk_gpio_chip *c, unsigned int offset,
                                                const char *consumer, int active_low, int level) {
    struct gpiod_line_settings *settings = gpiod_line_settings_new();
    struct gpiod_line_config *line_config = gpiod_line_config_new();
    struct gpiod_request_config *request_config = gpiod_request_config_new();
    kiosk_gpio_line *l = calloc(1, sizeof *l);
    struct gpiod_line_request *request = NULL;
    int e = ENOMEM;
    if (settings && line_config && request_config && l) {
        int value = flip(active_low, level);
        if (gpiod_line_settings_set_direction(settings, GPIOD_LINE_DIRECTION_OUTPUT) == 0 &&
            gpiod_line_settings_set_output_value(settings, value ? GPIOD_LINE_VALUE_ACTIVE : GPIOD_LINE_VALUE_INACTIVE) == 0) {
            gpiod_line_settings_set_active_low(settings, active_low ? true : false);
            gpiod_request_config_set_consumer(request_config, consumer);
            if (gpiod_line_config_add_line_settings(line_config, &offset, 1, settings) == 0)
                request = gpiod_chip_request_lines(c->chip, request_config, line_config);
        }
        e = errno;
    }
    if (settings) gpiod_line_settings_free(settings);
    if (line_config) gpiod_line_config_free(line_config);
    if (request_config) gpiod_request_config_free(request_config);
    if (!request) {
        free(l);
        errno = e ? e : EIO;
        return NULL;
    }
    l->request = request;
    l->offset = offset;
    l->active_low = active_low;
    return l;
}

int kiosk_gpio_line_set(kiosk_gpio_line *l, int level) {
    int value = flip(l->active_low, level);
    return gpiod_line_request_set_value(l->request, l->offset,
                                        value ? GPIOD_LINE_VALUE_ACTIVE : GPIOD_LINE_VALUE_INACTIVE);
}

void kiosk_gpio_line_release(kiosk_gpio_line *l) {
    if (!l) return;
    gpiod_line_request_release(l->request);
    free(l);
}

const char *kiosk_gpio_library_version(void) {
    static char version[64];
    snprintf(version, sizeof version, "libgpiod %s (v2 API)", gpiod_api_version());
    return version;
}

/* Inputs: v2 asks the kernel for edge detection, bias and debounce in the line's settings (the
 * kernel debounces in software where the chip cannot), and reads edges from the request into an
 * edge event buffer. The event clock is CLOCK_MONOTONIC (said, though it is the default). */
struct kiosk_gpio_input {
    struct gpiod_line_request *request;
    struct gpiod_edge_event_buffer *buffer;
    unsigned int offset;
    int active_low;
};

kiosk_gpio_input *kiosk_gpio_line_request_input(kiosk_gpio_chip *c, unsigned int offset, const char *consumer,
                                                int active_low, int bias, unsigned int debounce_us,
                                                int falls_only, int *kernel_debounced) {
    struct gpiod_line_settings *settings = gpiod_line_settings_new();
    struct gpiod_line_config *line_config = gpiod_line_config_new();
    struct gpiod_request_config *request_config = gpiod_request_config_new();
    struct gpiod_edge_event_buffer *buffer = gpiod_edge_event_buffer_new(16);
    kiosk_gpio_input *in = calloc(1, sizeof *in);
    struct gpiod_line_request *request = NULL;
    int e = ENOMEM;
    *kernel_debounced = 0;
    if (settings && line_config && request_config && buffer && in) {
        enum gpiod_line_bias b = GPIOD_LINE_BIAS_AS_IS;
        switch (bias) {
        case KIOSK_GPIO_BIAS_PULL_UP: b = GPIOD_LINE_BIAS_PULL_UP; break;
        case KIOSK_GPIO_BIAS_PULL_DOWN: b = GPIOD_LINE_BIAS_PULL_DOWN; break;
        case KIOSK_GPIO_BIAS_DISABLED: b = GPIOD_LINE_BIAS_DISABLED; break;
        default: break;
        }
        if (gpiod_line_settings_set_direction(settings, GPIOD_LINE_DIRECTION_INPUT) == 0 &&
            gpiod_line_settings_set_edge_detection(settings, !falls_only ? GPIOD_LINE_EDGE_BOTH
                                                             : active_low ? GPIOD_LINE_EDGE_RISING
                                                                          : GPIOD_LINE_EDGE_FALLING) == 0 &&
            gpiod_line_settings_set_bias(settings, b) == 0 &&
            gpiod_line_settings_set_event_clock(settings, GPIOD_LINE_CLOCK_MONOTONIC) == 0) {
            gpiod_line_settings_set_active_low(settings, active_low ? true : false);
            gpiod_line_settings_set_debounce_period_us(settings, debounce_us);
            gpiod_request_config_set_consumer(request_config, consumer);
            if (gpiod_line_config_add_line_settings(line_config, &offset, 1, settings) == 0)
                request = gpiod_chip_request_lines(c->chip, request_config, line_config);
        }
        e = errno;
    }
    if (settings) gpiod_line_settings_free(settings);
    if (line_config) gpiod_line_config_free(line_config);
    if (request_config) gpiod_request_config_free(request_config);
    if (!request) {
        if (buffer) gpiod_edge_event_buffer_free(buffer);
        free(in);
        errno = e ? e : EIO;
        return NULL;
    }
    in->request = request;
    in->buffer = buffer;
    in->offset = offset;
    in->active_low = active_low;
    *kernel_debounced = debounce_us > 0;
    return in;
}

int kiosk_gpio_input_fd(kiosk_gpio_input *in) { return gpiod_line_request_get_fd(in->request); }

int kiosk_gpio_input_level(kiosk_gpio_input *in) {
    enum gpiod_line_value v = gpiod_line_request_get_value(in->request, in->offset);
    if (v == GPIOD_LINE_VALUE_ERROR) return -1;
    return flip(in->active_low, v == GPIOD_LINE_VALUE_ACTIVE);
}

int kiosk_gpio_input_read_edges(kiosk_gpio_input *in, unsigned long long *timestamps_ns, int *levels, int max) {
    if (max > 16) max = 16;
    int n = gpiod_line_request_read_edge_events(in->request, in->buffer, (size_t)max);
    for (int i = 0; i < n; i++) {
        struct gpiod_edge_event *ev = gpiod_edge_event_buffer_get_event(in->buffer, (unsigned long)i);
        timestamps_ns[i] = (unsigned long long)gpiod_edge_event_get_timestamp_ns(ev);
        /* The edge of the logical value (active-low flips it). */
        levels[i] = flip(in->active_low, gpiod_edge_event_get_event_type(ev) == GPIOD_EDGE_EVENT_RISING_EDGE);
    }
    return n;
}

void kiosk_gpio_input_release(kiosk_gpio_input *in) {
    if (!in) return;
    gpiod_line_request_release(in->request);
    gpiod_edge_event_buffer_free(in->buffer);
    free(in);
}
#endif
