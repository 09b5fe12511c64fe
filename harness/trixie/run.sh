#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The trixie tier: the kiosk built and tested as on today's Raspberry Pi OS (Debian 13 "trixie":
# libgpiod v2, Debian's own Swift 6.0.3 from `swiftlang`). See docs/design/tiers.md.
#
#   harness/trixie/run.sh            make release, the libcamera plugin, the part of make test that can
#                                  differ on trixie (make test-trixie-part) and make demo inside a trixie root
#   harness/trixie/run.sh --all      the same with the whole of make test
#   harness/trixie/run.sh --root     only make (or reuse) the root; print its path
#   harness/trixie/run.sh -- CMD...  run CMD in the checkout's copy inside the root
#
# The root is made with mmdebstrap from Debian's archive and kept in $KIOSK_TRIXIE_CACHE (default
# .cache/trixie in the repository); it is made anew when the package list changes (the list is
# the Makefile's own for trixie, `make print-deps CODENAME=trixie`). The checkout is copied in
# (its .build stays inside the root between runs) and ../shared is bind-mounted read-only beside
# it, so the tests find the corpus where they do on the host. Every mount is undone on every way
# out. Ends with "N passed, M failed"; exit 0 when nothing failed.
set -euo pipefail
# In a mount namespace of its own: its mounts (and mmdebstrap's) end with it, however it ends. CI
# stops a failed run's jobs ahead without their traps, and a bind of ../shared left in the root
# outlived the clone it came from: the next run's bind onto that deleted folder failed (ENOENT).
[ -n "${TRIXIE_RUN_NS:-}" ] || [ "$(id -u)" != 0 ] || TRIXIE_RUN_NS=1 exec unshare --mount --propagation private -- "$0" "$@"
unset TRIXIE_RUN_NS

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
CACHE=${KIOSK_TRIXIE_CACHE:-$REPO/.cache/trixie}
MIRROR=${KIOSK_DEBIAN_MIRROR:-http://deb.debian.org/debian}
SUITE=trixie
MODE=tests
TESTS=test-trixie-part
case "${1:-}" in
  --all) TESTS=test ;;
  --root) MODE=root ;;
  --) MODE=command; shift ;;
  "") ;;
  *) echo "usage: $0 [--all | --root | -- COMMAND...]" >&2; exit 64 ;;
esac

t_start=$(date +%s)
stamp() { echo "trixie: +$(( $(date +%s) - t_start ))s $*"; }
die() { echo "FAIL trixie: $*"; echo "0 passed, 1 failed"; exit 1; }

[ "$(id -u)" = 0 ] || die "needs root (chroot, mounts)"
"$REPO/harness/host-packages.sh" trixie mmdebstrap rsync || die "cannot install mmdebstrap, rsync"

# --- the root: trixie with the packages the Makefile's `make deps` wants there -----------------------
# --no-print-directory: under a make inside a make, MAKEFLAGS carries -w, and "Entering directory"
# would join the list (a new key: the cached root thrown away).
PACKAGES=$(make -s --no-print-directory -C "$REPO" print-deps CODENAME=$SUITE)
[ -n "$PACKAGES" ] || die "make print-deps CODENAME=$SUITE printed no packages"
# And trixie's own libgpiod v2 and V4L2 command-line tools, for the VM tier's --gpiod2 run; g++
# and libcamera-dev (0.4 there) for the libcamera plugin's build.
PACKAGES="$PACKAGES gpiod v4l-utils g++ libcamera-dev"
KEY=$(echo "$SUITE $PACKAGES" | tr ' ' '\n' | sort | sha256sum | cut -c1-12)
ROOT=$CACHE/root-$KEY
# One maker at a time (CI makes the root in one of two lanes ahead while the other waits here).
mkdir -p "$CACHE"
exec 8>"$CACHE/root.lock"
flock 8
if [ ! -e "$ROOT.done" ]; then
  # Nothing mounted inside what is removed (a /dev bound there would be emptied with it).
  "$REPO/harness/unmount-below.sh" "$CACHE"/root-*
  rm -rf "$CACHE"/root-*
  stamp "making the $SUITE root (packages: $PACKAGES)"
  mmdebstrap --variant=apt --include="$(echo $PACKAGES | tr ' ' ,)" "$SUITE" "$ROOT" "$MIRROR" \
    >"$CACHE/mmdebstrap.log" 2>&1 || { tail -20 "$CACHE/mmdebstrap.log"; die "mmdebstrap failed (log: $CACHE/mmdebstrap.log)"; }
  touch "$ROOT.done"
  stamp "root made: $(du -sh "$ROOT" | cut -f1)"
fi
exec 8>&-
if [ "$MODE" = root ]; then echo "$ROOT"; exit 0; fi

# --- mounts, undone on every way out ------------------------------------------------------------------
# What an earlier run left mounted where this one mounts is taken down first (in this namespace
# only: the host's copy may be in another run's use).
"$REPO/harness/unmount-below.sh" "$ROOT/proc" "$ROOT/dev" "$ROOT/sys" "$ROOT/work/shared"
MOUNTS=()
cleanup() {
  local i
  for ((i = ${#MOUNTS[@]} - 1; i >= 0; i--)); do umount "${MOUNTS[i]}" 2>/dev/null || umount -l "${MOUNTS[i]}" 2>/dev/null || true; done
}
trap cleanup EXIT
trap 'exit 130' INT TERM
bind() {  # bind SOURCE TARGET [ro]
  mkdir -p "$2"
  mount --bind "$1" "$2"
  MOUNTS+=("$2")
  [ "${3:-}" = ro ] && mount -o remount,bind,ro "$2"
  return 0
}
mount -t proc proc "$ROOT/proc" && MOUNTS+=("$ROOT/proc")
bind /dev "$ROOT/dev"
bind /dev/pts "$ROOT/dev/pts"
bind /sys "$ROOT/sys" ro
# What is written into the root, one run at a time (CI's builds ahead run two of these side by
# side: two update-ca-certificates would write one bundle, and one copy's --delete would remove
# the other's files in flight).
exec 7>"$ROOT.copy.lock"
flock 7
cp /etc/resolv.conf "$ROOT/etc/resolv.conf" 2>/dev/null || true
# And the host's local certificate authorities (a site's TLS proxy, Debian's place for them), so
# that `make test` in the root (its `make peers`) reaches PyPI for the test peers as the host does.
shopt -s nullglob
local_cas=(/usr/local/share/ca-certificates/*.crt)
shopt -u nullglob
if [ ${#local_cas[@]} -gt 0 ]; then
  cp "${local_cas[@]}" "$ROOT/usr/local/share/ca-certificates/" &&
    chroot "$ROOT" update-ca-certificates >/dev/null 2>&1 || die "cannot add the host's local CAs to the root"
fi

# The checkout (what is in the working tree, not only what is committed), and shared/ beside it.
mkdir -p "$ROOT/work/kiosk"
# By content, without the times (-a less -t): a file that did not change keeps the root's copy and
# its time, so that a fresh clone (every file new to make) rebuilds in the root only what changed.
# What git ignores is not copied (and the root's own stays): every build folder (.build, and
# Fuzz/.build, which CI's fuzz build writes while this copies: a file gone mid-copy failed rsync).
rsync -rlpgoD --checksum --delete --filter=':- .gitignore' --exclude /.cache --exclude /build "$REPO/" "$ROOT/work/kiosk/"
exec 7>&-
# KIOSK_SHARED names that folder when it is not beside the checkout (a git worktree elsewhere).
SHARED=${KIOSK_SHARED:-$REPO/../shared}
if [ -d "$SHARED" ]; then bind "$SHARED" "$ROOT/work/shared" ro; fi

inside() {  # inside COMMAND...: in the copy, a clean environment
  chroot "$ROOT" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    HOME=/root LANG=C.UTF-8 TERM=dumb CI="${CI:-}" /bin/bash -c 'cd /work/kiosk && "$@"' inside "$@"
}

if [ "$MODE" = command ]; then inside "$@"; exit; fi

stamp "$(inside swift --version 2>&1 | head -1); $(inside sh -c 'dpkg-query -W -f="libgpiod-dev \${Version}" libgpiod-dev')"
passed=0 failed=0 failed_names=""
step() {  # step NAME COMMAND...: one PASS/FAIL line, the output in $CACHE/NAME.log
  local name=$1 log=$CACHE/$1.log; shift
  local t0=$(date +%s)
  if inside "$@" >"$log" 2>&1; then
    echo "PASS trixie: $name ($(( $(date +%s) - t0 )) s)"; passed=$((passed + 1))
  else
    echo "FAIL trixie: $name ($(( $(date +%s) - t0 )) s; log: $log)"; tail -40 "$log" | sed 's/^/  | /'; failed=$((failed + 1)); failed_names="$failed_names${failed_names:+, }$name" 
  fi
}
step release make release
# The libcamera plugin against trixie's libcamera, its control handling (make check: a Camera
# Module 3's and a Module 2's control tables through libcamera's own types), and the kiosk's
# loader accepting it.
step libcamera-plugin bash -c 'make -C plugins/libcamera clean kiosk-libcamera.so lc-probe check && plugins/libcamera/lc-probe plugins/libcamera/kiosk-libcamera.so list | tee /dev/stderr | grep -q "^version "'
# The trixie tier's expected skips (harness/xctest/expected-skips/trixie): any other fails it.
step test env KIOSK_TEST_TIER=trixie make "$TESTS"
{ grep -E "Executed [0-9]+ tests|error:" "$CACHE/test.log" || true; } | tail -3 | sed 's/^/  | /'
# The demo judges itself: its last event says whether the scene went as narrated.
step demo bash -c 'make demo > /tmp/demo.log 2>&1; status=$?; cat /tmp/demo.log; [ $status = 0 ] && grep -q "demo_result result=pass" /tmp/demo.log'
stamp "done"
echo "$passed passed, $failed failed${failed_names:+ (failed: $failed_names)}"
[ "$failed" = 0 ]
