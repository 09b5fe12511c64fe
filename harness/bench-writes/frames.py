#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""make bench-writes' frames and store (harness/bench-writes/run.sh; issue 45).

  frames.py plain DIR N              N plain codes (SCAN-0001...), each then an empty frame
  frames.py grants DIR N KEY PEER    N one-time credentials (a cti each) signed with KEY by the
                                     tests' peer (Tests/Peers/credentials.py, PyPI's cwt)
  frames.py idle DIR N FPS           an empty frame, then N FIFOs fed an empty frame each at FPS
                                     frames a second (a camera that sees no code; it runs until
                                     it has fed them all or is killed)
  frames.py feed SRC DIR LOG         SRC's frames through FIFOs in DIR, a code's frame only once LOG
                                     (the kiosk's stderr) has a verdict or scan line for every code
                                     before it: as fast as the kiosk answers, never past its queue
                                     (FEED_GAP_S=S: and S seconds after the code before)
  frames.py prefill FILE N           a used-token store (version 1, which every kiosk reads) of N entries

Frames are 320x320 PGM files, the code drawn by qrencode (-t ASCII) at 3 pixels a module, as
the tests' replays are. Codes are passed to qrencode as an argument list, never through a shell.
"""
import json
import os
import subprocess
import sys
import time

SIZE = 320


def pgm(modules):
    img = bytearray([200] * SIZE * SIZE)
    if modules:
        n = len(modules)
        scale = 3
        off = (SIZE - n * scale) // 2
        for y, row in enumerate(modules):
            for x, dark in enumerate(row):
                if dark:
                    for dy in range(scale):
                        start = (off + y * scale + dy) * SIZE + off + x * scale
                        img[start:start + scale] = b"\x00" * scale
    return b"P5\n%d %d\n255\n" % (SIZE, SIZE) + bytes(img)


def qr(text):
    out = subprocess.run(["qrencode", "-t", "ASCII", "-m", "4", "--", text], check=True, capture_output=True, text=True).stdout
    return [[row[i] == "#" for i in range(0, len(row), 2)] for row in out.splitlines() if row]


def write_frames(folder, codes):
    os.makedirs(folder, exist_ok=True)
    blank = pgm(None)
    frames = [blank]
    for c in codes:
        frames += [pgm(qr(c)), blank]
    for i, f in enumerate(frames):
        with open(os.path.join(folder, "%05d.pgm" % i), "wb") as fh:
            fh.write(f)


def main():
    op = sys.argv[1]
    if op == "plain":
        write_frames(sys.argv[2], ["SCAN-%04d" % i for i in range(1, int(sys.argv[3]) + 1)])
    elif op == "idle":
        folder, n, fps = sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
        os.makedirs(folder, exist_ok=True)
        blank = pgm(None)
        with open(os.path.join(folder, "00000.pgm"), "wb") as fh:
            fh.write(blank)
        for i in range(1, n + 1):
            os.mkfifo(os.path.join(folder, "%05d.pgm" % i))
        print("ready", flush=True)
        for i in range(1, n + 1):
            with open(os.path.join(folder, "%05d.pgm" % i), "wb") as fh:
                fh.write(blank)
            time.sleep(1 / fps)
    elif op == "grants":
        folder, n, key, peer = sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
        p = subprocess.Popen([sys.executable, peer], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        now = int(time.time())
        codes = []
        for i in range(n):
            claims = {"1": "acme", "2": "bench", "4": now + 7 * 86400, "5": now - 60, "6": now - 60,
                      "7": {"hex": "b0%06x" % i}}
            p.stdin.write(json.dumps({"op": "sign", "lib": "cwt", "private": key, "alg": "ES256", "kid": "bench",
                                      "claims": claims, "zlib": True, "prefix": "KC1:"}) + "\n")
            p.stdin.flush()
            a = json.loads(p.stdout.readline())
            codes.append(a["text"])
        p.stdin.close()
        p.wait()
        write_frames(folder, codes)
    elif op == "feed":
        src, folder, log = sys.argv[2], sys.argv[3], sys.argv[4]
        gap = float(os.environ.get("FEED_GAP_S", "0"))  # seconds between two codes (a quiet door)
        names = sorted(n for n in os.listdir(src) if n.endswith(".pgm"))
        os.makedirs(folder, exist_ok=True)
        # The first frame a file (the kiosk reads it at open for the size, then again), the rest FIFOs.
        with open(os.path.join(src, names[0]), "rb") as fh, open(os.path.join(folder, names[0]), "wb") as out:
            out.write(fh.read())
        for n in names[1:]:
            os.mkfifo(os.path.join(folder, n))
        print("ready", flush=True)
        answered = 0
        for i, n in enumerate(names):
            if i == 0:
                continue
            codes_before = i // 2  # frame 0 empty, then a code and an empty frame each
            if i % 2 == 1 and i > 1:
                time.sleep(gap)
            if i % 2 == 1:
                deadline = time.time() + 60
                while answered < codes_before and time.time() < deadline:
                    try:
                        with open(log, "rb") as fh:
                            text = fh.read()
                        answered = text.count(b"event=verdict ") or text.count(b"event=scan ")
                    except FileNotFoundError:
                        pass
                    if answered < codes_before:
                        time.sleep(0.005)
            with open(os.path.join(src, n), "rb") as fh:
                data = fh.read()
            with open(os.path.join(folder, n), "wb") as fh:
                fh.write(data)
    elif op == "prefill":
        path, n = sys.argv[2], int(sys.argv[3])
        lines = sorted("c:%032x 4102444800" % (0xa0 << 120 | i) for i in range(n))
        with open(path, "w") as fh:
            fh.write("kiosk-used-tokens 1\n" + "".join(l + "\n" for l in lines) + "end %d\n" % n)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
