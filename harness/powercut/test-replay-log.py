#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Host check of replay-log against a log written here by the documented format (no device-mapper
needed): writes, a discard, flushes, FUA and marks, listed and replayed in prefixes, whole and in
increments; a bad magic and a log cut short are refused.

usage: test-replay-log.py REPLAY-LOG-BINARY      prints PASS/FAIL lines and "N passed, M failed"
"""
import os
import struct
import subprocess
import sys
import tempfile

SS = 512
MAGIC = 0x6a736677736872
FLUSH, FUA, DISCARD, MARK = 1, 2, 4, 8


def entry(sector, nr, flags, data=b"", mark=b""):
    head = struct.pack("<QQQQ", sector, nr, flags, len(mark) if flags & MARK else 0)
    block = (head + mark).ljust(SS, b"\0")
    return block + (data if not flags & (DISCARD | MARK) else b"")


def main():
    binary = sys.argv[1]
    passed = failed = 0

    def check(ok, what):
        nonlocal passed, failed
        print(("PASS" if ok else "FAIL") + " replay-log: " + what)
        passed, failed = passed + ok, failed + (not ok)

    a, b, c = b"A" * SS * 2, b"B" * SS, b"C" * SS * 3
    entries = [
        entry(2, 2, 0, a),             # 0: A on sectors 2-3
        entry(0, 0, FLUSH),            # 1: a flush
        entry(3, 1, FUA, b),           # 2: B over sector 3, FUA
        entry(0, 0, MARK, mark=b"one"),  # 3
        entry(1, 3, 0, c),             # 4: C on 1-3
        entry(2, 1, DISCARD),          # 5: sector 2 discarded
        entry(0, 0, FLUSH | FUA),      # 6
    ]
    with tempfile.TemporaryDirectory() as t:
        log = os.path.join(t, "log")
        with open(log, "wb") as f:
            f.write(struct.pack("<QQQI", MAGIC, 1, len(entries), SS).ljust(SS, b"\0") + b"".join(entries))
        out = subprocess.run([binary, "--log", log, "--list"], capture_output=True, text=True).stdout.splitlines()
        want = ["# entries 7 sectorsize 512", "0 - 2 2", "1 FLUSH 0 0", "2 FUA 3 1", "3 MARK 0 0 one", "4 - 1 3",
                "5 DISCARD 2 1", "6 FLUSH,FUA 0 0"]
        check(out == want, "--list gives every entry with its flags and the mark's name: %s" % out)
        r = subprocess.run([binary, "--log", log, "--find-mark", "one"], capture_output=True, text=True)
        check(r.stdout.strip() == "3", "--find-mark one is entry 3 (%r)" % r.stdout)
        base = b"z" * SS * 6

        def state(n):  # what the disk holds after entries 0..n-1
            d = bytearray(base)
            steps = [(2, a), None, (3, b), None, (1, c), (2, b"\0" * SS), None]
            for s in steps[:n]:
                if s:
                    d[s[0] * SS:s[0] * SS + len(s[1])] = s[1]
            return bytes(d)

        dev = os.path.join(t, "dev")
        for n in range(len(entries) + 1):
            with open(dev, "wb") as f:
                f.write(base)
            subprocess.run([binary, "--log", log, "--replay", dev, "--to", str(n)], check=True)
            check(open(dev, "rb").read() == state(n), "the replay of the first %d entries" % n)
        with open(dev, "wb") as f:
            f.write(base)
        for k, n in [(0, 2), (2, 5), (5, 7)]:
            subprocess.run([binary, "--log", log, "--replay", dev, "--from", str(k), "--to", str(n)], check=True)
        check(open(dev, "rb").read() == state(7), "an incremental replay (0-2, 2-5, 5-7) ends where the whole one does")
        r = subprocess.run([binary, "--log", log, "--replay", dev, "--to", "8"], capture_output=True)
        check(r.returncode != 0, "--to past the entry count is refused")
        with open(log, "r+b") as f:
            f.truncate(SS * 4)
        r = subprocess.run([binary, "--log", log, "--list"], capture_output=True, text=True)
        check(r.returncode != 0 and "cut short" in r.stderr, "a log cut short is an error: %r" % r.stderr.strip())
        with open(log, "r+b") as f:
            f.write(b"\0" * 8)
        r = subprocess.run([binary, "--log", log, "--list"], capture_output=True, text=True)
        check(r.returncode != 0 and "magic" in r.stderr, "a log without the magic is refused")
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
