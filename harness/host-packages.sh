#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# host-packages.sh [--log FILE] NAME PACKAGE...: installs those of the Debian packages that are
# missing, and nothing else (idempotent). The one place the Makefile and the test tiers ask apt.
# NAME begins its lines ("vm: installing qemu-system-x86"), on stderr. apt's own output goes to
# FILE (its last lines are shown when apt fails), or to stderr.
# Exit: 0 every package is installed; 1 apt failed; 77 packages are missing and there is no root
# (nor sudo that asks no password, without a terminal) to install them.
set -uo pipefail
log=""
if [ "${1:-}" = --log ]; then log=$2; shift 2; fi
[ $# -ge 1 ] || { echo "usage: $0 [--log FILE] NAME PACKAGE..." >&2; exit 64; }
name=$1; shift

# One at a time: CI's prefetch jobs ask apt side by side (apt's own lock on its lists gives up).
exec 9>"${TMPDIR:-/tmp}/kiosk-host-packages.lock"
flock 9

missing=""
for p in "$@"; do
  dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' || missing="$missing $p"
done
if [ -z "$missing" ]; then
  echo "$name: all Debian packages present" >&2
  exit 0
fi

sudo=""
if [ "$(id -u)" != 0 ]; then
  sudo=sudo
  command -v sudo >/dev/null && { [ -t 0 ] || sudo -n true 2>/dev/null; } \
    || { echo "$name: missing Debian packages:$missing (and no root to install them)" >&2; exit 77; }
fi
echo "$name: installing$missing" >&2
apt_get() { $sudo env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 "$@"; }
# shellcheck disable=SC2086  # the package names are words
if [ -n "$log" ]; then
  { apt_get update -q && apt_get install -y -q --no-install-recommends $missing; } >"$log" 2>&1
else
  { apt_get update -q && apt_get install -y -q --no-install-recommends $missing; } >&2
fi || {
  [ -z "$log" ] || tail -20 "$log" >&2
  echo "$name: could not install$missing" >&2
  exit 1
}
