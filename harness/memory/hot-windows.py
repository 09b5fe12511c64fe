#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Checks that a release kiosk was linked with Sources/KioskMain/hot-functions.order first in its text
# (docs/design/memory.md), and that the list is not stale: most of the functions it names are in the
# binary, and four fifths of those of the kiosk's own modules (trixie's Swift names a few of them
# otherwise); a module renamed or moved renames its functions: after the move to one folder a
# concern the list still matched 80% of its names, the standard library's, when 67% of the kiosk's
# own were left, and the idle kiosk kept 1.0-1.1 MB more resident. And their code lies in few of
# the text's 64 kB windows (the kernel maps a binary's text 64 kB around each page faulted in, so
# the windows are what an idle kiosk keeps resident).
# Linked in the order of the objects instead, the same functions lie in 73 of 85 windows; as
# linked, in 39 (amd64, 6.3.1). Exit 1 with the figures when either does not hold.
#
#   harness/memory/hot-windows.py BINARY ORDER
import os, re, subprocess, sys

binary, order = sys.argv[1], sys.argv[2]
WINDOW = 64 * 1024
symbols = {}
for line in subprocess.run(['nm', '-S', binary], capture_output=True, text=True, check=True).stdout.splitlines():
    f = line.split()
    if len(f) == 4 and f[2] in 'tTwW':
        symbols[f[3]] = (int(f[0], 16), int(f[1], 16))
if len(symbols) < 1000:
    sys.exit(f'hot-windows: nm found {len(symbols)} functions in {binary} (stripped?)')
text = None
for line in subprocess.run(['readelf', '-SW', binary], capture_output=True, text=True, check=True).stdout.splitlines():
    f = line.replace('[ ', '[').split()
    if len(f) > 5 and f[1] == '.text':
        text = (int(f[3], 16), int(f[5], 16))
if text is None:
    sys.exit(f'hot-windows: no .text in {binary}')
listed = [line.strip() for line in open(order) if line.strip()]
present = [symbols[name] for name in listed if name in symbols]
windows = set()
for address, size in present:
    first, last = (address - text[0]) // WINDOW, (address + max(size, 1) - 1 - text[0]) // WINDOW
    windows.update(range(first, last + 1))
total = text[1] // WINDOW + 1
print(f'{len(present)} of {len(listed)} listed functions in the binary; their code in {len(windows)} of the '
      f'{total} 64 kB windows of its text')
# The kiosk's own: a Swift name of one of the package's modules (the folders of Sources/, beside the
# list's own folder), $s<length><module>...
modules = set(os.listdir(os.path.join(os.path.dirname(os.path.abspath(order)), '..')))
def module(name):
    m = re.match(r'\$s(\d+)', name)
    return name[m.end():m.end() + int(m.group(1))] if m else None
own = [name for name in listed if module(name) in modules]
own_present = sum(name in symbols for name in own)
print(f'of the kiosk\'s own modules: {own_present} of {len(own)} listed functions in the binary')
stale = len(present) < 0.75 * len(listed) or own_present < 0.8 * len(own)
scattered = len(windows) > 0.6 * total
if stale:
    print('more than a quarter of the list, or a fifth of the kiosk\'s own functions in it, is not in the binary: '
          'make hot-functions, then rebuild')
if scattered:
    print('the listed functions are spread through the text: the order was not used (Package.swift, '
          '--symbol-ordering-file)')
sys.exit(1 if stale or scattered else 0)
