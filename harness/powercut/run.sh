#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Power cuts tested as file systems are tested (issue 45): the release kiosk's state on ext4 over
# device-mapper's log-writes target in a QEMU VM booted from Debian's own kernel (the VM tier's,
# harness/vm), the log replayed to every flush, FUA and mark and between them, each point mounted
# and started; see harness/powercut/guest.sh for what is checked.
#
#   harness/powercut/run.sh [--full] [--require] [--readonly]   (also: harness/vm/run.sh --powercut ...)
#
# Then, bounded or full, the read-only card (harness/powercut/readonly.sh: Raspberry Pi OS's overlay
# root with and without a state partition, six boots with two power cuts, about a minute); --readonly:
# that alone.
# Bounded by default (CI: the kiosk's marks (8 grants, 3 modes, 4 pretix entries, 2 site bundles,
# the spool's) and a few points between, the self-test's nosync path at its marks; 72 s on the
# 2-core machine beside other work, before the entries, bundles and spool); --full: 16 grants, 8
# entries, every point of the kiosk's log, and each broken write path with its control.
# KIOSK_VM_BINARY: this kiosk instead of the checkout's release build; KIOSK_POWERCUT_EXPECT=broken
# with it: a test build that skips its fsync, whose points must fail. KIOSK_POWERCUT_TOKENS,
# _POINTS, _VARIANTS (the self-test's, comma-separated, or none): see below and guest.sh.
# Prints PASS/FAIL/INFO lines, "powercut: N points, M failures" for the kiosk and for each broken
# write path of the self-test, and ends with "N passed, M failed"; exit 0 when nothing failed. When
# it cannot run here it prints one "SKIP powercut: why" line and exits 0 (1 with --require or
# KIOSK_VM_REQUIRE=1). Caches under $KIOSK_VM_CACHE (default .cache/vm), shared with harness/vm.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
. "$REPO/harness/vm/initramfs.sh"
CACHE=${KIOSK_VM_CACHE:-$REPO/.cache/vm}
REQUIRE=${KIOSK_VM_REQUIRE:-0}
MODE=bounded ONLY_READONLY=0
for arg in "$@"; do
  case $arg in
    --full) MODE=full ;;
    --require) REQUIRE=1 ;;
    --readonly) ONLY_READONLY=1 ;;
    *) echo "usage: $0 [--full] [--require] [--readonly]" >&2; exit 64 ;;
  esac
done
BINARY=${KIOSK_VM_BINARY:-}
PEERS_PY=${KIOSK_PEERS_PYTHON:-$REPO/.cache/peers/bin/python}
TOKENS=${KIOSK_POWERCUT_TOKENS:-}        # one-time credentials granted in the workload (8; 16 with --full)
POINTS=${KIOSK_POWERCUT_POINTS:-}       # bounded: at most this many points a phase (guest.sh's default)
VARIANTS=${KIOSK_POWERCUT_VARIANTS:-}   # the self-test's broken write paths, comma-separated (none: none)
EXPECT=${KIOSK_POWERCUT_EXPECT:-}       # broken: the kiosk given (KIOSK_VM_BINARY) is a test build that skips its fsync: its points must fail
TIMEOUT_S=${KIOSK_VM_TIMEOUT:-3600}
[ "$MODE" = bounded ] && TIMEOUT_S=${KIOSK_VM_TIMEOUT:-900}
[ -n "$TOKENS" ] || { TOKENS=8; [ "$MODE" = full ] && TOKENS=16; }
TICKETS=4; [ "$MODE" = full ] && TICKETS=8   # pretix tickets entered in the workload
for v in $(compgen -e | grep -E '^KIOSK_(VM|PEERS_PYTHON$|POWERCUT)'); do unset "$v"; done
export PATH=$PATH:/opt/swift/usr/bin

t_start=$(date +%s%N)
stamp() { local ms=$(( ($(date +%s%N) - t_start) / 1000000 )); printf 'powercut: +%d.%ds %s\n' $((ms / 1000)) $((ms % 1000 / 100)) "$*"; }
skip() {
  echo "SKIP powercut: $*"
  if [ "$REQUIRE" = 1 ]; then echo "0 passed, 1 failed"; exit 1; fi
  exit 0
}
die() { echo "FAIL powercut: $*"; echo "0 passed, 1 failed"; exit 1; }

[ "$(uname -s)-$(uname -m)" = Linux-x86_64 ] || skip "needs x86-64 Linux (this is $(uname -s)-$(uname -m))"
command -v dpkg-query >/dev/null && command -v apt-get >/dev/null || skip "needs Debian (dpkg, apt-get)"

# The host's Debian packages: QEMU, busybox, the kernel's version (linux-headers-amd64: the kernel
# itself is only downloaded into the cache), zint (the QR codes' modules), the guest's tools
# (e2fsprogs, dmsetup: copied in with their libraries), gcc for the static helpers.
PACKAGES="qemu-system-x86 busybox-static kmod linux-headers-amd64 cpio zint e2fsprogs dmsetup python3 gcc libc6-dev mosquitto"
# shellcheck disable=SC2086
"$REPO/harness/host-packages.sh" --log "${TMPDIR:-/tmp}/kiosk-powercut-apt.log" powercut $PACKAGES \
  || skip "could not install its Debian packages (see above)"
"$PEERS_PY" -c 'import cwt, pyotp' 2>/dev/null || skip "no test peers with cwt at $PEERS_PY (make peers)"

# --- the kernel: Debian's, as harness/vm/run.sh fetches it (the same cache) -----------------------
KVER=$(dpkg-query -W -f='${Depends}' linux-headers-amd64 | sed -n 's/.*linux-headers-\([^ ]*\) .*/\1/p')
KPKGVER=$(dpkg-query -W -f='${Version}' "linux-headers-$KVER")
K=$CACHE/kernel-$KVER-$KPKGVER
mkdir -p "$CACHE/debs"
if [ ! -e "$K/kroot.done" ]; then
  deb=$(ls "$CACHE/debs/linux-image-${KVER}_${KPKGVER}_"*.deb 2>/dev/null | head -1 || true)
  if [ -z "$deb" ]; then
    (cd "$CACHE/debs" && apt-get -o APT::Sandbox::User=root download -q "linux-image-$KVER=$KPKGVER" >/dev/null) || die "apt-get download linux-image-$KVER failed"
    deb=$(ls "$CACHE/debs/linux-image-${KVER}_${KPKGVER}_"*.deb | head -1)
  fi
  rm -rf "$K/kroot" && mkdir -p "$K"
  dpkg-deb -x "$deb" "$K/kroot"
  touch "$K/kroot.done"
  stamp "kernel $KVER unpacked"
fi
VMLINUZ=$K/kroot/boot/vmlinuz-$KVER
MODDIR=$K/kroot/lib/modules/$KVER
[ -e "$MODDIR/modules.dep" ] || depmod -b "$K/kroot" "$KVER"
[ -e "$MODDIR/kernel/drivers/md/dm-log-writes.ko" ] || die "Debian's kernel $KVER has no dm-log-writes.ko"

# --- the kiosk: release -------------------------------------------------------------------------
KIOSK_BIN=$BINARY
if [ -z "$KIOSK_BIN" ]; then
  command -v swift >/dev/null || skip "swift not found (or give a binary in KIOSK_VM_BINARY)"
  (cd "$REPO" && swift build -c release --static-swift-stdlib --product kiosk >"$CACHE/swift-build.log" 2>&1) ||
    { tail -30 "$CACHE/swift-build.log"; die "swift build failed"; }
  KIOSK_BIN=$REPO/.build/release/kiosk
  stamp "kiosk built"
fi
[ -x "$KIOSK_BIN" ] || die "no kiosk binary at $KIOSK_BIN"

W=$(mktemp -d "${TMPDIR:-/tmp}/kiosk-powercut.XXXXXX")
trap 'rm -rf "$W"' EXIT

# --- the read-only card: its own boots (harness/powercut/readonly.sh); RO_PASSED, RO_FAILED ------
readonly_card() {
  local status
  mkdir -p "$W/readonly"
  set +e
  "$HERE/readonly.sh" "$CACHE" "$K/kroot" "$KVER" "$KIOSK_BIN" "$PEERS_PY" "$W/readonly" 2>&1 |
    tee "$W/readonly.out" | grep --line-buffered -E '^(PASS|FAIL|INFO) '
  status=${PIPESTATUS[0]}
  set -e
  RO_PASSED=$(grep -c '^PASS ' "$W/readonly.out" || true)
  RO_FAILED=$(grep -c '^FAIL ' "$W/readonly.out" || true)
  if [ "$status" != 0 ] && [ "$RO_FAILED" = 0 ]; then
    tail -5 "$W/readonly.out"; echo "FAIL powercut: readonly.sh ended $status without a FAIL line"; RO_FAILED=1
  fi
  stamp "read-only card done"
}
if [ "$ONLY_READONLY" = 1 ]; then
  readonly_card
  echo "$RO_PASSED passed, $RO_FAILED failed"
  [ "$RO_FAILED" = 0 ]
  exit
fi
ROOT=$W/root
mkdir -p "$ROOT"/{bin,sbin,usr/bin,usr/sbin,etc,proc,sys,dev,tmp,run,harness,powercut,lib/modules/"$KVER"/deps}

# --- the host's part: the replayer against a log written by the documented format --------------
gcc -O2 -static -Wall -Wextra -o "$ROOT/bin/replay-log" "$HERE/replay-log.c"
gcc -O2 -static -Wall -Wextra -o "$ROOT/bin/pc-writer" "$HERE/writer.c"
gcc -O2 -static -o "$ROOT/bin/vmtool" "$REPO/harness/vm/vmtool.c"
host_out=$(python3 "$HERE/test-replay-log.py" "$ROOT/bin/replay-log") || true
echo "$host_out" | grep -E '^FAIL ' || true
host_pass=$(echo "$host_out" | grep -c '^PASS ' || true)
host_fail=$(echo "$host_out" | grep -c '^FAIL ' || true)
[ "$host_fail" = 0 ] && echo "PASS host: replay-log lists and replays a log of the documented format ($host_pass checks)"

# --- the credentials: minted by the project's example issuer, drawn for the replay camera -------
"$PEERS_PY" "$HERE/mint.py" "$ROOT/powercut" "$TOKENS" "$TICKETS" || die "mint.py failed"
"$KIOSK_BIN" decode "$ROOT/powercut/tokens/001.pgm" | grep -q ': QR-Code: KC1:' || die "the first credential's picture does not decode"
"$KIOSK_BIN" decode "$ROOT/powercut/tickets/001.pgm" | grep -q ': QR-Code: ' || die "the first ticket's picture does not decode"
rm -f "$ROOT/powercut/issuer.key"
stamp "$TOKENS one-time credentials, $TICKETS pretix tickets and two site bundles minted"

# --- the initramfs ---------------------------------------------------------------------------------
cp /bin/busybox "$ROOT/bin/busybox"
ln -s busybox "$ROOT/bin/sh"
strip -o "$ROOT/bin/kiosk" "$KIOSK_BIN"
tools="/usr/sbin/mke2fs /usr/sbin/e2fsck /usr/sbin/dmsetup /usr/sbin/mosquitto"
for t in $tools; do cp "$t" "$ROOT/usr/sbin/"; done
cp /etc/mke2fs.conf "$ROOT/etc/"
# shellcheck disable=SC2086
# libcrypto and libmosquitto: the kiosk dlopen()s them for the credentials' signatures and the
# broker (ldd does not list them).
crypto=$(host_library libcrypto.so.3)
[ -n "$crypto" ] || die "no libcrypto.so.3 (libssl3)"
libmosq=$(host_library libmosquitto.so.1)
[ -n "$libmosq" ] || die "no libmosquitto.so.1 (libmosquitto1)"
for f in $crypto $libmosq; do mkdir -p "$ROOT$(dirname "$f")" && cp -L "$f" "$ROOT$f"; done
initramfs_libs "$ROOT" "" "$ROOT/bin/kiosk" $crypto $libmosq $tools || die "the kiosk's libraries"
initramfs_modules "$K/kroot" "$KVER" "$ROOT" loop dm-log-writes ext4 || die "the modules"
cp "$REPO/harness/vm/init.sh" "$ROOT/init" && chmod +x "$ROOT/init"
cp "$REPO/harness/vm/guest-tests.sh" "$ROOT/harness/"
cp "$HERE/guest.sh" "$ROOT/powercut/"
echo "$KVER" >"$ROOT/harness/kernel"
initramfs_pack "$ROOT" "$W/initrd.cpio"
stamp "initramfs $(du -m "$W/initrd.cpio" | cut -f1) MB"

# --- boot ------------------------------------------------------------------------------------------
LOG=$CACHE/last-powercut.log
vm_boot "$LOG" "PASS|FAIL|SKIP|INFO|powercut:" "$TIMEOUT_S" 1024 "$W/initrd.cpio" \
  "POWERCUT=$MODE${POINTS:+ POWERCUT_POINTS=$POINTS}${VARIANTS:+ POWERCUT_VARIANTS=$VARIANTS}${EXPECT:+ POWERCUT_EXPECT=$EXPECT}"
status=$VM_STATUS
stamp "VM finished (QEMU status $status; console in $LOG)"

passed=$(( $(grep -c '^PASS ' "$LOG" || true) + (host_fail == 0 ? 1 : 0) ))
failed=$(( $(grep -c '^FAIL ' "$LOG" || true) + host_fail ))
case $status in
  1) grep -qE '^RESULT [0-9]+ passed, [0-9]+ failed$' "$LOG" || { echo "FAIL powercut: guest passed but printed no RESULT line"; failed=$((failed + 1)); } ;;
  3) [ "$failed" -gt 0 ] || { echo "FAIL powercut: guest reported failure without a FAIL line"; failed=$((failed + 1)); } ;;
  124) echo "FAIL powercut: timed out after ${TIMEOUT_S}s (see $LOG)"; failed=$((failed + 1)) ;;
  *) echo "FAIL powercut: QEMU ended with status $status, not a verdict (see $LOG)"; tail -20 "$LOG"; failed=$((failed + 1)) ;;
esac
# A kiosk built to be broken is asked about its writes only.
if [ -z "$EXPECT" ]; then
  readonly_card
  passed=$((passed + RO_PASSED)) failed=$((failed + RO_FAILED))
fi
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
