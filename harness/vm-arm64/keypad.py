#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A USB keypad made with uinput (Debian's python3-evdev), for the arm64 VM tier's keypad group
(harness/vm-arm64/keypad.sh): the installed kiosk reads it as it reads a real one, through the
kernel's evdev and libevdev.

usage: keypad.py   (commands on standard input, one a line; an answer on standard output for each)
    plug               make the device: "plugged /dev/input/eventN"
    type pad|row KEYS  press and release each key, a key every 80 ms (a quick hand): digits from the
                       numeric pad (KEY_KP0-9, Enter KEY_KPENTER) or the number row (KEY_0-9, Enter
                       KEY_ENTER); `*` is Esc on both. "typed N" (never the keys)
    grabbed            whether another program holds the device: a reader of our own opens it and
                       tries EVIOCGRAB ("grabbed EBUSY" when the kiosk has it), then reads what one
                       key press sends ("read N" events: 0 when the grab keeps them from it)
    unplug             destroy the device: "unplugged"
    quit
The device: bus USB, a keypad's keys (the two digit rows, Enter, Esc, Backspace, Num Lock).
"""
import errno
import select
import sys
import time

import evdev
from evdev import ecodes as e

ROW = {str(d): getattr(e, f"KEY_{d}") for d in range(10)}
PAD = {str(d): getattr(e, f"KEY_KP{d}") for d in range(10)}
KEYS = sorted(set(ROW.values()) | set(PAD.values()) | {e.KEY_KPENTER, e.KEY_ENTER, e.KEY_ESC, e.KEY_BACKSPACE, e.KEY_NUMLOCK})
NAME = "kiosk-vm USB keypad"


def answer(text):
    print(text, flush=True)


def press(ui, code):
    ui.write(e.EV_KEY, code, 1)
    ui.syn()
    time.sleep(0.02)
    ui.write(e.EV_KEY, code, 0)
    ui.syn()


def node(ui):
    # python3-evdev finds the event node under /sys once udev has made it.
    for _ in range(100):
        if ui.device is not None:
            return ui.device.path
        time.sleep(0.05)
    return "none"


def main():
    ui = None
    for line in sys.stdin:
        cmd = line.split()
        if not cmd:
            continue
        if cmd[0] == "plug":
            ui = evdev.UInput({e.EV_KEY: KEYS}, name=NAME, bustype=e.BUS_USB, vendor=0x1209, product=0x0001, version=1)
            answer(f"plugged {node(ui)}")
        elif cmd[0] == "type" and ui is not None and len(cmd) == 3:
            table = PAD if cmd[1] == "pad" else ROW
            enter = e.KEY_KPENTER if cmd[1] == "pad" else e.KEY_ENTER
            for k in cmd[2]:
                press(ui, table[k] if k in table else enter if k == "#" else e.KEY_ESC)
                time.sleep(0.06)
            answer(f"typed {len(cmd[2])}")
        elif cmd[0] == "grabbed" and ui is not None:
            other = evdev.InputDevice(node(ui))
            try:
                other.grab()
                other.ungrab()
                held = "free"
            except OSError as err:
                held = errno.errorcode.get(err.errno, str(err.errno))
            press(ui, e.KEY_NUMLOCK)
            n = 0
            while select.select([other.fd], [], [], 0.5)[0]:
                n += sum(1 for ev in other.read() if ev.type == e.EV_KEY)
            other.close()
            answer(f"grabbed {held} read {n}")
        elif cmd[0] == "unplug" and ui is not None:
            ui.close()
            ui = None
            answer("unplugged")
        elif cmd[0] == "quit":
            break
        else:
            answer(f"error {cmd[0]}")
    if ui is not None:
        ui.close()


if __name__ == "__main__":
    main()
