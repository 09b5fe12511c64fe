#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# issue 44: the clock with no network, on real clocks. Four QEMU boots of Debian's kernel (the
# driver tier's, harness/vm/run.sh) with a small initramfs whose /init is clock-guest.sh:
#   rtc     qemu's mc146818 RTC at the host's time, no network: a time-bound credential granted,
#           source=rtc; the floor the kiosk keeps at stop is copied out through the console
#   behind  the RTC at 2001 (-rtc base=2001-01-01), that floor given back: denied clock behind,
#           behind_s = the floor minus the guest's clock
#   none    no RTC at all (QEMU's microvm machine, rtc=off): source=none, denied clock not synchronized
#   ntp     the RTC at 2001 and the floor; chrony (Debian's, unpacked) in the guest syncs from an
#           NTP server this script starts on the host (chronyd -x: it never touches the host's
#           clock), reached over QEMU's user network (10.0.2.2 is the host's loopback):
#           source=ntp once synced, granted
#
#   harness/vm/clock.sh [--require] [CASE...]
#
# KIOSK_VM_BINARY: test this kiosk binary instead of building one; KIOSK_VM_CACHE as run.sh's.
# Prints one PASS/FAIL line per check and ends with "N passed, M failed"; exit 0 when nothing
# failed; "SKIP vm-clock: why" (exit 0, 1 with --require) when it cannot run here.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
. "$HERE/initramfs.sh"
CACHE=${KIOSK_VM_CACHE:-$REPO/.cache/vm}
REQUIRE=${KIOSK_VM_REQUIRE:-0}
BINARY=${KIOSK_VM_BINARY:-}
PEERS_PYTHON=${KIOSK_PEERS_PYTHON:-$REPO/.cache/peers/bin/python}
CASES=()
for arg in "$@"; do
  case $arg in
    --require) REQUIRE=1 ;;
    rtc|behind|none|ntp) CASES+=("$arg") ;;
    *) echo "usage: $0 [--require] [rtc|behind|none|ntp]..." >&2; exit 64 ;;
  esac
done
[ ${#CASES[@]} -gt 0 ] || CASES=(rtc behind none ntp)
for v in $(compgen -e | grep -E '^KIOSK_(VM|PEERS_PYTHON$)'); do unset "$v"; done
export PATH=$PATH:/opt/swift/usr/bin

skip() {
  echo "SKIP vm-clock: $*"
  if [ "$REQUIRE" = 1 ]; then echo "0 passed, 1 failed"; exit 1; fi
  exit 0
}
die() { echo "FAIL vm-clock: $*"; echo "0 passed, 1 failed"; exit 1; }

[ "$(uname -s)-$(uname -m)" = Linux-x86_64 ] || skip "needs x86-64 Linux"
command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 not found (qemu-system-x86)"
for t in dpkg-query apt-get busybox cpio gcc zint python3; do command -v "$t" >/dev/null || skip "$t not found"; done
[ -x "$PEERS_PYTHON" ] || skip "no test peers' python at $PEERS_PYTHON (make peers)"

# --- Debian's kernel (the one run.sh uses) and chrony, unpacked into the cache, never installed --
KVER=$(dpkg-query -W -f='${Depends}' linux-headers-amd64 | sed -n 's/.*linux-headers-\([^ ]*\) .*/\1/p')
KPKGVER=$(dpkg-query -W -f='${Version}' "linux-headers-$KVER")
K=$CACHE/kernel-$KVER-$KPKGVER
mkdir -p "$CACHE/debs"
fetch() {  # fetch PACKAGE[=VERSION]: apt-get download into the cache, print the .deb path
  local name=${1%%=*} ver=${1#*=} deb
  [ "$ver" = "$1" ] && ver=$(apt-cache policy "$name" | sed -n 's/^  Candidate: //p')
  deb=$(ls "$CACHE/debs/${name}_${ver//:/%3a}_"*.deb 2>/dev/null | head -1 || true)
  if [ -z "$deb" ]; then
    (cd "$CACHE/debs" && apt-get -o APT::Sandbox::User=root download -q "$name=$ver" >/dev/null) || die "apt-get download $name=$ver failed"
    deb=$(ls "$CACHE/debs/${name}_${ver//:/%3a}_"*.deb | head -1)
  fi
  echo "$deb"
}
if [ ! -e "$K/kroot.done" ]; then
  rm -rf "$K/kroot" && mkdir -p "$K"
  dpkg-deb -x "$(fetch "linux-image-$KVER=$KPKGVER")" "$K/kroot"
  touch "$K/kroot.done"
fi
VMLINUZ=$K/kroot/boot/vmlinuz-$KVER
MODDIR=$K/kroot/lib/modules/$KVER
[ -e "$MODDIR/modules.dep" ] || depmod -b "$K/kroot" "$KVER"
CHRONY=$CACHE/chrony
if [ ! -x "$CHRONY/usr/sbin/chronyd" ]; then
  rm -rf "$CHRONY" && dpkg-deb -x "$(fetch chrony)" "$CHRONY"
fi

# --- the kiosk: release, Swift runtime linked in (as run.sh builds it) ---------------------------
KIOSK_BIN=$BINARY
if [ -z "$KIOSK_BIN" ]; then
  command -v swift >/dev/null || skip "swift not found (or give a binary in KIOSK_VM_BINARY)"
  (cd "$REPO" && swift build -c release --static-swift-stdlib --product kiosk >"$CACHE/swift-build-clock.log" 2>&1) ||
    { tail -30 "$CACHE/swift-build-clock.log"; die "swift build failed"; }
  KIOSK_BIN=$REPO/.build/release/kiosk
fi
[ -x "$KIOSK_BIN" ] || die "no kiosk binary at $KIOSK_BIN"

W=$(mktemp -d "${TMPDIR:-/tmp}/kiosk-vm-clock.XXXXXX")
TAG=vm-clock
CHRONYD=$CHRONY/usr/sbin/chronyd
. "$HERE/clock-common.sh"
cleanup() { stop_server; rm -rf "$W"; }
trap cleanup EXIT
ROOT=$W/root
mkdir -p "$ROOT"/{bin,sbin,usr/bin,proc,sys,dev,tmp,run,etc,trust,frames,state,lib/modules}

# --- an issuer's key, one time-bound credential (a day either side of now), its frames ---------
clock_credential
got=$("$KIOSK_BIN" decode "$ROOT/frames/0001.pgm" 2>&1 | sed 's/^[^:]*: //')
[ "$got" = "QR-Code: $CRED" ] || die "the credential's frame does not decode on the host: ${got:0:80}"

# --- the initramfs: busybox, vmtool, the kiosk and chronyd with their libraries, e1000 -----------
cp "$(command -v busybox)" "$ROOT/bin/busybox"
ln -s busybox "$ROOT/bin/sh"
gcc -O2 -static -o "$ROOT/bin/vmtool" "$HERE/vmtool.c"
strip -o "$ROOT/bin/kiosk" "$KIOSK_BIN"
cp "$CHRONY/usr/sbin/chronyd" "$ROOT/sbin/chronyd"
# libcrypto is loaded when credentials are on (dlopen: ldd does not see it).
LIBCRYPTO=$(host_library libcrypto.so.3)
[ -e "$LIBCRYPTO" ] || skip "no libcrypto.so.3 (libssl3)"
mkdir -p "$ROOT$(dirname "$LIBCRYPTO")" && cp -L "$LIBCRYPTO" "$ROOT$LIBCRYPTO"
initramfs_libs "$ROOT" "" "$ROOT/bin/kiosk" "$ROOT/sbin/chronyd" "$LIBCRYPTO" || die "the libraries of the kiosk and chronyd"
modprobe -d "$K/kroot" -S "$KVER" --show-depends e1000 | awk '$1 == "insmod" { print $2 }' | while read -r ko; do
  cp "$ko" "$ROOT/lib/modules/"; echo "/lib/modules/$(basename "$ko")"
done >"$ROOT/lib/modules/net.list"
echo 'root:x:0:0:root:/tmp:/bin/sh' >"$ROOT/etc/passwd"
echo 'root:x:0:' >"$ROOT/etc/group"
cp "$HERE/clock-guest.sh" "$ROOT/init"
chmod +x "$ROOT/init"
initramfs_pack "$ROOT" "$W/initrd.cpio"

LOGS=$CACHE/clock
mkdir -p "$LOGS"
boot() {  # boot CASE INITRD APPEND QEMU-ARGS...: the console in $LOGS/CASE.log
  local name=$1 initrd=$2 append=$3 t0 status
  shift 3
  t0=$(date +%s)
  VM_SMP=1 vm_boot "$LOGS/$name.log" "PASS|FAIL|INFO" "${KIOSK_VM_CLOCK_TIMEOUT:-300}" 512 "$initrd" "clock_case=$name $append" "$@"
  status=$VM_STATUS
  echo "INFO vm-clock: $name: QEMU status $status in $(( $(date +%s) - t0 )) s (console in $LOGS/$name.log)"
  case $status in
    1) grep -q "^RESULT clock-$name failed=0" "$LOGS/$name.log" || echo "FAIL vm-clock: $name: no RESULT line" ;;
    3) ;;
    124) echo "FAIL vm-clock: $name: timed out" ;;
    *) echo "FAIL vm-clock: $name: QEMU ended with status $status"; tail -5 "$LOGS/$name.log" ;;
  esac
}

rtc_at() { echo -machine pc -rtc "base=$1"; }  # rtc_at TIME [network]: x86's mc146818 at TIME
NIC=e1000
boot_none() {
  # microvm has no HPET or ACPI PM timer to calibrate the TSC against, and on a busy host the
  # PIT calibration fails (then the boot hangs): the host's TSC rate (TCG's) is given.
  local khz
  khz=$(awk -F: '/^cpu MHz/ { printf "%d", $2 * 1000; exit }' /proc/cpuinfo)
  boot none "$1" "tsc_early_khz=${khz:-2000000}" -machine microvm,rtc=off,isa-serial=on
}
run_cases "${CASES[@]}"
