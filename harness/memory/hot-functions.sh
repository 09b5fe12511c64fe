#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Writes Sources/KioskMain/hot-functions.order: the functions of the kiosk binary that an idle kiosk
# runs (start-up and the frame loop on empty frames, with the defaults), then those the same run adds
# with KIOSK_MQTT_URL set (at a Mosquitto broker started here), then those a decode runs (`kiosk
# decode` on one photograph of each symbology of ../shared/corpus, when it is there), one mangled
# name a line. lld links the release kiosk with them first (Package.swift,
# --symbol-ordering-file), so that they share a few pages of its text instead of being spread
# through all of it (issue 23; docs/design/memory.md): the kernel maps a binary's text 64 kB around each
# page an instruction faults in, so an idle kiosk had 4.3 MB of its 5.3 MB of text resident.
#
# The list comes from valgrind's callgrind on a release build, run here. A function the list does
# not name is linked after the listed ones: a stale list costs memory, never correctness, and
# `make test-deploy` says when too much of it is stale (binary-hot-functions).
#
# Another toolchain's standard library has other names (trixie's Swift 6.0.3, which also builds the
# arm64 kiosk): --add keeps the list and adds, after it, the names this toolchain's binary runs that
# it lacks (make hot-functions does both, the second in the trixie root when there is one).
#
#   harness/memory/hot-functions.sh [--binary PATH] [--add]     (make hot-functions)
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
binary= add=0
while [ $# -gt 0 ]; do
  case "$1" in
    --binary) binary=${2:?--binary needs a path}; shift 2 ;;
    --binary=*) binary=${1#--binary=}; shift ;;
    --add) add=1; shift ;;
    *) echo "usage: $0 [--binary PATH] [--add]" >&2; exit 64 ;;
  esac
done
[ -n "$binary" ] || binary=$(cd "$repo" && swift build -c release --static-swift-stdlib --show-bin-path)/kiosk
[ -x "$binary" ] || { echo "hot-functions: no kiosk at $binary (make release)" >&2; exit 1; }
command -v valgrind >/dev/null || { echo "hot-functions: valgrind is missing (apt install valgrind; make hot-functions installs it)" >&2; exit 1; }
out=$repo/Sources/KioskMain/hot-functions.order
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# valgrind 3.19 cannot read lld's DWARF 5: profile a copy without debug info (its symbols kept).
strip --strip-debug -o "$work/kiosk" "$binary"
. "$repo/harness/memory/common.sh"
empty_frames "$work/frames" 100
profile() {  # profile NAME [VAR=VALUE...] -- ARGS...: callgrind's record of `kiosk ARGS`, in $work/NAME.out
  local name=$1 settings=(); shift
  while [ "$1" != -- ]; do settings+=("$1"); shift; done; shift
  env -i PATH=/usr/bin:/bin KIOSK_CAMERA="replay:$work/frames" "${settings[@]}" \
    valgrind --tool=callgrind --demangle=no --callgrind-out-file="$work/$name.out" "$work/kiosk" "$@" \
    >"$work/$name.log" 2>&1 || { tail -5 "$work/$name.log"; echo "hot-functions: kiosk $* failed under valgrind" >&2; exit 1; }
}
profile idle -- run
records=("$work/idle.out")
# A fleet member's: the same idle run with KIOSK_MQTT_URL at a Mosquitto broker on a loopback port.
if command -v mosquitto >/dev/null; then
  broker=
  trap '[ -n "$broker" ] && kill "$broker" 2>/dev/null; rm -rf "$work"' EXIT
  start_broker
  mkdir -p "$work/state"
  profile mqtt KIOSK_MQTT_URL="mqtt://127.0.0.1:$port" STATE_DIRECTORY="$work/state" -- run
  records+=("$work/mqtt.out")
else
  echo "hot-functions: no mosquitto (apt install mosquitto): the MQTT side's functions are not listed" >&2
fi
corpus=$repo/../shared/corpus/zxing-blackbox
if [ -d "$corpus" ]; then
  photos=()
  for set in qrcode-1 ean13-3 code128-1 aztec-1 datamatrix-1 pdf417-1; do
    photo=$(ls "$corpus/$set"/*.png 2>/dev/null | head -1) && [ -n "$photo" ] && photos+=("$photo")
  done
  profile decode -- decode "${photos[@]}"
  records+=("$work/decode.out")
else
  echo "hot-functions: no corpus at $corpus: the decoder's functions are not listed" >&2
fi

# The functions callgrind saw run in the kiosk object itself (not in a shared library), in the order
# of the records: the idle run's first.
kept=/dev/null
[ $add = 1 ] && [ -f "$out" ] && kept=$out
python3 - "$work/kiosk" "$kept" "${records[@]}" >"$work/order" <<'PY'
import re, sys
binary = sys.argv[1]
order = [line.strip() for line in open(sys.argv[2]) if line.strip()]
seen = set(order)
for record in sys.argv[3:]:
    objects, functions, current, new = {}, {}, None, []
    for line in open(record):
        m = re.match(r'^(c?ob|c?fn)=\((\d+)\)(?: (.*))?$', line.rstrip('\n'))
        if not m:
            continue
        kind, index, name = m.groups()
        table = objects if kind.endswith('ob') else functions
        if name is not None:
            table[index] = name
        if kind == 'ob':
            current = objects[index]
        elif kind == 'fn' and current == binary:
            f = functions[index]
            # callgrind names code it has no symbol for by address, and the process's entry so
            if f not in seen and not f.startswith('0x') and not f.startswith('('):
                seen.add(f)
                new.append(f)
    order += sorted(new)  # in name order within a record: the list changes only where the code did
for f in order:
    print(f)
PY
[ "$(wc -l <"$work/order")" -gt 200 ] || { echo "hot-functions: only $(wc -l <"$work/order") functions found; not written" >&2; exit 1; }
mv "$work/order" "$out"
echo "hot-functions: $(wc -l <"$out") functions in ${out#"$repo"/}"
