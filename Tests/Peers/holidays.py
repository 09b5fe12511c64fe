#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The holidays' independent side (issue 33): an iCalendar file written by PyPI's `icalendar`
(yearly RRULEs, a multi-day closure, EXDATEs, an all-day event without DTEND, a timed event that
is no closed day) and its all-day days expanded by `recurring_ical_events`.

  holidays.py write FILE            writes the calendar
  holidays.py expand FILE FROM DAYS prints the closed days (ISO dates, sorted) of FILE in
                                    [FROM, FROM + DAYS), one a line
"""
import datetime
import sys

import icalendar
import recurring_ical_events

D = datetime.date


def event(uid, summary, start, end=None, rrule=None, exdates=(), rdates=()):
    e = icalendar.Event()
    e.add("uid", uid + "@kiosk.test")
    e.add("dtstamp", datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc))
    e.add("summary", summary)
    e.add("dtstart", start)
    if end is not None:
        e.add("dtend", end)
    if rrule:
        e.add("rrule", rrule)
    for x in exdates:
        e.add("exdate", x)
    for x in rdates:
        e.add("rdate", x)
    return e


def write(path):
    cal = icalendar.Calendar()
    cal.add("prodid", "-//kiosk tests//holidays//EN")
    cal.add("version", "2.0")
    cal.add_component(event("new-year", "New Year", D(2020, 1, 1), D(2020, 1, 2), {"freq": "yearly"}))
    # Two days a year, the 2027 one cancelled.
    cal.add_component(event("christmas", "Christmas", D(2020, 12, 25), D(2020, 12, 27), {"freq": "yearly"},
                            exdates=[D(2027, 12, 25)]))
    cal.add_component(event("summer", "Summer closure", D(2026, 8, 3), D(2026, 8, 15)))
    cal.add_component(event("may-day", "Labour day", D(2026, 5, 1), D(2026, 5, 2), {"freq": "yearly", "count": 5},
                            exdates=[D(2027, 5, 1)]))
    # No DTEND: one day (RFC 5545 3.6.1).
    cal.add_component(event("unity", "Unity day", D(2026, 10, 3), None, {"freq": "yearly", "until": D(2027, 12, 31)}))
    # The first Monday of each quarter, and two extra days.
    cal.add_component(event("inventory", "Inventory", D(2026, 1, 5), D(2026, 1, 6),
                            {"freq": "monthly", "interval": 3, "byday": "1MO"}, rdates=[D(2026, 2, 16), D(2027, 6, 30)]))
    # A meeting with a time of day: not a closed day.
    cal.add_component(event("meeting", "Weekly meeting",
                            datetime.datetime(2026, 1, 7, 10, 0, tzinfo=datetime.timezone.utc),
                            datetime.datetime(2026, 1, 7, 11, 0, tzinfo=datetime.timezone.utc), {"freq": "weekly"}))
    with open(path, "wb") as f:
        f.write(cal.to_ical())


def expand(path, start, days):
    cal = icalendar.Calendar.from_ical(open(path, "rb").read())
    first = D.fromisoformat(start)
    end = first + datetime.timedelta(days=days)
    out = set()
    for e in recurring_ical_events.of(cal).between(first, end):
        s = e["DTSTART"].dt
        if isinstance(s, datetime.datetime):
            continue
        stop = e["DTEND"].dt if "DTEND" in e else s + datetime.timedelta(days=1)
        d = s
        while d < stop:
            if first <= d < end:
                out.add(d)
            d += datetime.timedelta(days=1)
    for d in sorted(out):
        print(d.isoformat())


if __name__ == "__main__":
    if sys.argv[1] == "write":
        write(sys.argv[2])
    else:
        expand(sys.argv[2], sys.argv[3], int(sys.argv[4]))
