// SPDX-License-Identifier: Apache-2.0
/*
 * libical (Debian libical-dev, runtime libical3), RFC 5545's reference library, loaded on first
 * use (issue 33): nothing links it; dlopen("libical.so.3") and dlsym the first time a holidays
 * file is read, as libmosquitto and libcrypto are. It reads the file and expands each event's
 * recurrences (RRULE, RDATE, EXDATE) with icalcomponent_foreach_recurrence; which events close
 * the door is the Swift side's choice (no policy here).
 */
#ifndef KIOSK_CICAL_H
#define KIOSK_CICAL_H

#include <stddef.h>

/// The file dlopen'd, and the Debian package that ships it (bookworm's and trixie's soname).
#define KIOSK_ICAL_LIBRARY "libical.so.3"
#define KIOSK_ICAL_PACKAGE "libical3"

/// One occurrence of an event: its start and end (exclusive) as days since 1970-01-01 of the
/// event's own calendar (a DATE's day, a DATE-TIME's day as written), whether DTSTART is a DATE
/// (an all-day event), and the event's index in the file (0, 1, ...).
typedef void (*kiosk_ical_occurrence_fn)(long start_day, long end_day, int all_day, int event, void *context);

/// Reads `text` (a whole iCalendar object) and calls `occurrence` for every occurrence of each
/// VEVENT that starts before `to_day` and ends after `from_day` (days since 1970-01-01). Returns
/// the number of VEVENTs, or -1 with why in `err` (always NUL-terminated when errlen > 0): libical
/// cannot be loaded, the text is not a VCALENDAR, or libical found errors in it.
int kiosk_ical_occurrences(const char *text, long from_day, long to_day, kiosk_ical_occurrence_fn occurrence, void *context,
                           char *err, size_t errlen);

#endif
