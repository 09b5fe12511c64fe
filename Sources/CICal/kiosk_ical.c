// SPDX-License-Identifier: Apache-2.0
/*
 * libical on first use (kiosk_ical.h): the few functions the holidays need, resolved with dlsym
 * once and typed by libical's own header (the compiler checks each against it).
 */
#define _GNU_SOURCE
#include "kiosk_ical.h"
#include "kiosk_dlopen.h"

#include <libical/ical.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char why[256];

static struct {
    __typeof__(&icalparser_parse_string) parse_string;
    __typeof__(&icalcomponent_isa) isa;
    __typeof__(&icalcomponent_count_errors) count_errors;
    __typeof__(&icalcomponent_get_first_component) first_component;
    __typeof__(&icalcomponent_get_next_component) next_component;
    __typeof__(&icalcomponent_get_dtstart) dtstart;
    __typeof__(&icalcomponent_foreach_recurrence) foreach_recurrence;
    __typeof__(&icalcomponent_free) free_component;
    __typeof__(&icalerror_set_errors_are_fatal) errors_are_fatal;
} ical;

static void load_once(void) {
    static const char *const names[] = {KIOSK_ICAL_LIBRARY, NULL};
    void *handle = kiosk_dlopen_first(names, NULL, why, sizeof why);
    if (!handle) {
        size_t n = strlen(why);
        snprintf(why + n, sizeof why - n, " (install %s)", KIOSK_ICAL_PACKAGE);
        return;
    }
#define FIND(field, name)                                                                  \
    if (!(ical.field = (__typeof__(ical.field))kiosk_dlsym(handle, #name, why, sizeof why))) { \
        ical.parse_string = NULL;                                                          \
        return;                                                                            \
    }
    FIND(isa, icalcomponent_isa)
    FIND(count_errors, icalcomponent_count_errors)
    FIND(first_component, icalcomponent_get_first_component)
    FIND(next_component, icalcomponent_get_next_component)
    FIND(dtstart, icalcomponent_get_dtstart)
    FIND(foreach_recurrence, icalcomponent_foreach_recurrence)
    FIND(free_component, icalcomponent_free)
    FIND(errors_are_fatal, icalerror_set_errors_are_fatal)
    FIND(parse_string, icalparser_parse_string)  /* last: set means all are */
    /* libical's default may abort() on an error; a holidays file must never stop the kiosk. */
    ical.errors_are_fatal(0);
}

/* The date `days` after 1970-01-01 (Howard Hinnant's civil_from_days), as a DATE. */
static struct icaltimetype date_of(long days) {
    struct icaltimetype t = {0};
    long z = days + 719468, era = (z >= 0 ? z : z - 146096) / 146097, doe = z - era * 146097;
    long yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365, doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    long mp = (5 * doy + 2) / 153;
    t.day = (int)(doy - (153 * mp + 2) / 5 + 1);
    t.month = (int)(mp < 10 ? mp + 3 : mp - 9);
    t.year = (int)(yoe + era * 400 + (t.month <= 2));
    t.is_date = 1;
    return t;
}

struct walk {
    kiosk_ical_occurrence_fn occurrence;
    void *context;
    int all_day;
    int event;
};

/* A span's ends are time_t; for a DATE or a floating time libical counts them as UTC, so the day
 * is the quotient (floored). icaltime_span_new moves a DATE end to the last second of that day
 * (libical 3.0: "go until the end of the day"), though DTEND is exclusive (RFC 5545 3.6.1): the
 * end's own day is the exclusive end of an all-day occurrence; an event without DTEND or
 * DURATION (end at its start) lasts one day. */
static long floor_day(time_t t) { return (long)(t >= 0 ? t / 86400 : -((-t + 86399) / 86400)); }

static void on_span(icalcomponent *comp, struct icaltime_span *span, void *data) {
    (void)comp;
    struct walk *w = data;
    long start = floor_day(span->start);
    long end = w->all_day ? floor_day(span->end) : floor_day(span->end - 1) + 1;
    if (end <= start) end = start + 1;
    w->occurrence(start, end, w->all_day, w->event, w->context);
}

int kiosk_ical_occurrences(const char *text, long from_day, long to_day, kiosk_ical_occurrence_fn occurrence, void *context,
                           char *err, size_t errlen) {
    pthread_once(&once, load_once);
    if (!ical.parse_string) {
        kiosk_say(err, errlen, "%s", why);
        return -1;
    }
    icalcomponent *root = ical.parse_string(text);
    if (!root || ical.isa(root) != ICAL_VCALENDAR_COMPONENT) {
        if (root) ical.free_component(root);
        kiosk_say(err, errlen, "not an iCalendar object (BEGIN:VCALENDAR ... END:VCALENDAR)");
        return -1;
    }
    int errors = ical.count_errors(root);
    if (errors > 0) {
        ical.free_component(root);
        kiosk_say(err, errlen, "libical found %d error%s in it", errors, errors == 1 ? "" : "s");
        return -1;
    }
    struct icaltimetype from = date_of(from_day), to = date_of(to_day);
    int events = 0;
    for (icalcomponent *e = ical.first_component(root, ICAL_VEVENT_COMPONENT); e; e = ical.next_component(root, ICAL_VEVENT_COMPONENT)) {
        struct icaltimetype start = ical.dtstart(e);
        struct walk w = {occurrence, context, start.is_date, events};
        ical.foreach_recurrence(e, from, to, on_span, &w);
        events++;
    }
    ical.free_component(root);
    return events;
}
