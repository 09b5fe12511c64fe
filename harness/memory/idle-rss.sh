#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The idle kiosk's memory (docs/design/memory.md; issue 23): the peak RSS (wait4's ru_maxrss, as GNU
# time's -f %M prints it) of
# `kiosk run` with the defaults on a replay of 600 empty 640x480 frames, the median of 5 runs; then
# the same with KIOSK_MQTT_URL at a Mosquitto broker started here on a loopback port (what MQTT
# costs when on: libmosquitto, libssl and libcrypto are loaded then, not before), and with a speaker
# (KIOSK_SPEAKER: libasound and the phrases). A bench, not a
# test: it prints figures and fails only when a run fails.
#
#   harness/memory/idle-rss.sh [--binary PATH]     (make bench-memory)
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
binary=
case "${1:-}" in
  --binary) binary=${2:?--binary needs a path} ;;
  --binary=*) binary=${1#--binary=} ;;
  "") binary=$(cd "$repo" && swift build -c release --static-swift-stdlib --show-bin-path)/kiosk ;;
  *) echo "usage: $0 [--binary PATH]" >&2; exit 64 ;;
esac
[ -x "$binary" ] || { echo "idle-rss: no kiosk at $binary (make release)" >&2; exit 1; }
command -v python3 >/dev/null || { echo "idle-rss: python3 is missing (apt install python3)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "idle-rss: GNU time is missing (apt install time; make bench-memory installs it)" >&2; exit 1; }
work=$(mktemp -d)
broker=
trap '[ -n "$broker" ] && kill "$broker" 2>/dev/null; rm -rf "$work"' EXIT
mkdir -p "$work/state"
. "$repo/harness/memory/common.sh"
empty_frames "$work/frames" 600

median_rss() {  # median_rss ENV...: the median peak RSS in kB of 5 runs
  local runs=()
  for _ in 1 2 3 4 5; do
    # GNU time forks and then execs: the child is that small program until the exec, so the peak
    # is the kiosk's. (A Python parent is not: its subprocess spawns by vfork, and the kernel
    # keeps the parent's own peak, 10 MB, in the child's ru_maxrss across the exec.)
    env -i PATH=/usr/bin:/bin KIOSK_CAMERA="replay:$work/frames" "$@" /usr/bin/time -f %M -o "$work/rss" "$binary" run \
      >/dev/null 2>"$work/run.log" || { tail -5 "$work/run.log"; echo "idle-rss: kiosk run failed" >&2; exit 1; }
    runs+=("$(tail -1 "$work/rss")")
  done
  printf '%s\n' "${runs[@]}" | sort -n | sed -n 3p
}
mb() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }

idle=$(median_rss); [[ $idle =~ ^[0-9]+$ ]] || exit 1
echo "idle RSS, defaults: $(mb "$idle") MB ($idle kB)"

# What that is made of: the RSS of each mapping of a kiosk idle on a longer replay (the same frame
# 20,000 times), read from /proc/PID/smaps a second in.
mkdir -p "$work/long"
for i in $(seq -w 0 19999); do ln "$work/frames/0000.pgm" "$work/long/$i.pgm"; done
env -i PATH=/usr/bin:/bin KIOSK_CAMERA="replay:$work/long" "$binary" run >/dev/null 2>&1 & pid=$!
sleep 1
if [ -r /proc/$pid/smaps ]; then
  echo "made of (kB RSS, of which private dirty; mappings of more than 64 kB):"
  awk '/^[0-9a-f]+-/ { name = $6 == "" ? "[anonymous]" : $6 }
       /^Rss:/ { rss[name] += $2; total += $2 } /^Private_Dirty:/ { dirty[name] += $2 }
       END { for (n in rss) if (rss[n] > 64) printf "  %6d %6d  %s\n", rss[n], dirty[n], n; printf "  %6d        total\n", total }' /proc/$pid/smaps | sort -rn
fi
kill $pid 2>/dev/null; wait $pid 2>/dev/null || true

# With a speaker (KIOSK_SPEAKER: ALSA's file PCM over null in an asoundrc of its own): libasound
# loaded, the default phrases rendered by espeak-ng into a cache here and held as samples.
if [ -x /usr/bin/espeak-ng ]; then
  printf 'pcm.door { type file; slave.pcm "null"; file "/dev/null"; format "raw" }\n' >"$work/asoundrc"
  speech=$(median_rss KIOSK_SPEAKER=door CACHE_DIRECTORY="$work/cache" ALSA_CONFIG_PATH="/usr/share/alsa/alsa.conf:$work/asoundrc")
  [[ $speech =~ ^[0-9]+$ ]] || exit 1
  echo "idle RSS, KIOSK_SPEAKER set (libasound loaded, the 16 default phrases held): $(mb "$speech") MB ($speech kB, +$(mb $((speech - idle))) MB)"
else
  echo "idle RSS with speech: not measured (no espeak-ng: make speech-test-deps)"
fi

if command -v mosquitto >/dev/null; then
  start_broker
  mqtt=$(median_rss KIOSK_MQTT_URL="mqtt://127.0.0.1:$port" STATE_DIRECTORY="$work/state"); [[ $mqtt =~ ^[0-9]+$ ]] || exit 1
  echo "idle RSS, KIOSK_MQTT_URL set (libmosquitto loaded): $(mb "$mqtt") MB ($mqtt kB, +$(mb $((mqtt - idle))) MB)"
else
  echo "idle RSS with MQTT: not measured (no mosquitto: apt install mosquitto)"
fi
