#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# issue 44: the clock group on the arm64 VM (qemu-system-aarch64 -M virt -cpu cortex-a72, TCG):
# the same four cases as harness/vm/clock.sh, with the same guest script (harness/vm/clock-guest.sh),
# on the virt machine's PL031 RTC and Debian trixie's arm64 kernel:
#   rtc     the PL031 at the host's time, no network: granted, source=rtc; the floor copied out
#   behind  the PL031 at 2001 (-rtc base=2001-01-01), that floor given back: denied clock behind
#   none    no RTC at all: the virt machine always has its PL031, so its driver (built into Debian's
#           kernel) is kept from starting (initcall_blacklist=pl031_driver_init; loaded as a module
#           it is not loaded): source=none, denied clock not synchronized
#   ntp     the PL031 at 2001 and the floor; chrony in the guest syncs from an NTP server this
#           script starts on the host (chronyd -x), over QEMU's user network: source=ntp, granted
# A small initramfs (busybox, the kiosk, chronyd and their libraries, the RTC's and the NIC's
# modules), all from trixie arm64 .debs unpacked with mmdebstrap --variant=extract (no arm64 code
# runs on the host), cached in $KIOSK_VM_ARM64_CACHE (default .cache/vm-arm64).
#
#   harness/vm-arm64/clock.sh [--binary KIOSK] [CASE...]   (default: harness/arm64/build.sh's binary)
#
# One PASS/FAIL line per check, then "N passed, M failed"; exit 0 when nothing failed.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
VMDIR=$REPO/harness/vm
CACHE=${KIOSK_VM_ARM64_CACHE:-$REPO/.cache/vm-arm64}
MIRROR=${KIOSK_DEBIAN_MIRROR:-http://deb.debian.org/debian}
PEERS_PYTHON=${KIOSK_PEERS_PYTHON:-$REPO/.cache/peers/bin/python}
BINARY=
CASES=()
while [ $# -gt 0 ]; do
  case $1 in
    --binary) BINARY=$2; shift ;;
    rtc|behind|none|ntp) CASES+=("$1") ;;
    *) echo "usage: $0 [--binary KIOSK] [rtc|behind|none|ntp]..." >&2; exit 64 ;;
  esac
  shift
done
[ ${#CASES[@]} -gt 0 ] || CASES=(rtc behind none ntp)
for v in $(compgen -e | grep -E '^KIOSK_(VM|PEERS_PYTHON$)'); do unset "$v"; done
die() { echo "FAIL vm-arm64-clock: $*"; echo "0 passed, 1 failed"; exit 1; }
skip() { echo "SKIP vm-arm64-clock: $*"; exit 0; }

command -v qemu-system-aarch64 >/dev/null || skip "qemu-system-aarch64 not found (qemu-system-arm)"
command -v mmdebstrap >/dev/null || skip "mmdebstrap not found"
[ -x "$PEERS_PYTHON" ] || skip "no test peers' python at $PEERS_PYTHON (make peers)"
if [ -z "$BINARY" ]; then
  BINARY=$("$REPO/harness/arm64/build.sh" 2>"$CACHE.build.log" | sed -n 's/^binary //p') || true
  [ -n "$BINARY" ] || { tail -20 "$CACHE.build.log"; die "harness/arm64/build.sh failed"; }
fi
[ -f "$BINARY" ] || die "no arm64 kiosk at $BINARY"

# --- trixie arm64, unpacked: the kernel, busybox, chrony, libssl and the kiosk's Depends ---------
PACKAGES="linux-image-arm64 busybox-static chrony libssl3t64 $(grep -v '^#' "$HERE/deb-depends" | grep -vx adduser | tr '\n' ' ')"
KEY=$(echo "format=1 $PACKAGES" | sha256sum | cut -c1-12)
R=$CACHE/clock-root-$KEY
mkdir -p "$CACHE"
if [ ! -e "$R.done" ]; then
  rm -rf "$CACHE"/clock-root-* && mkdir -p "$R"
  mmdebstrap --variant=extract --architectures=arm64 --include="$(echo $PACKAGES | tr -s ' ' ',' | sed 's/,$//')" \
    trixie "$R" "$MIRROR" >"$CACHE/clock-mmdebstrap.log" 2>&1 || { tail -20 "$CACHE/clock-mmdebstrap.log"; die "mmdebstrap failed"; }
  touch "$R.done"
fi
MODBASE=$R/usr/lib/modules
[ -d "$MODBASE" ] || MODBASE=$R/lib/modules
KVER=$(ls "$MODBASE" | head -1)
VMLINUZ=$R/boot/vmlinuz-$KVER
[ -f "$VMLINUZ" ] || die "no kernel in $R"
[ -e "$MODBASE/$KVER/modules.dep" ] || depmod -b "${MODBASE%/lib/modules}" "$KVER"

W=$(mktemp -d "${TMPDIR:-/tmp}/kiosk-vm-arm64-clock.XXXXXX")
TAG=vm-arm64-clock
. "$VMDIR/clock-common.sh"
cleanup() { stop_server; rm -rf "$W"; }
trap cleanup EXIT
ROOT=$W/root
mkdir -p "$ROOT"/{bin,sbin,usr/bin,proc,sys,dev,tmp,run,etc,trust,frames,state,lib/modules}

# --- the credential and its frames (harness/vm/clock-common.sh) ------------------------------------
clock_credential

# --- the initramfs: files from the arm64 root and what they need (readelf's NEEDED, recursively) --
cp "$R/usr/bin/busybox" "$ROOT/bin/busybox"
ln -s busybox "$ROOT/bin/sh"
cp "$BINARY" "$ROOT/bin/kiosk"
cp "$R/usr/sbin/chronyd" "$ROOT/sbin/chronyd"
LIBDIRS="$R/usr/lib/aarch64-linux-gnu $R/lib/aarch64-linux-gnu $R/usr/lib"
find_lib() { local d; for d in $LIBDIRS; do [ -e "$d/$1" ] && { echo "$d/$1"; return; }; done; return 1; }
declare -A seen=()
add_needed() {  # add_needed ELF: copy its libraries (and theirs) into /lib/aarch64-linux-gnu
  local lib path
  for lib in $(readelf -d "$1" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
    [ -n "${seen[$lib]:-}" ] && continue
    seen[$lib]=1
    path=$(find_lib "$lib") || die "no $lib in the arm64 root (add its package to PACKAGES)"
    mkdir -p "$ROOT/lib/aarch64-linux-gnu"
    cp -L "$path" "$ROOT/lib/aarch64-linux-gnu/$lib"
    add_needed "$path"
  done
}
libcrypto=$(find_lib libcrypto.so.3) || die "no libcrypto.so.3"
for elf in "$ROOT/bin/kiosk" "$ROOT/sbin/chronyd" "$libcrypto"; do add_needed "$elf"; done
cp -L "$libcrypto" "$ROOT/lib/aarch64-linux-gnu/libcrypto.so.3"
cp -L "$(find_lib ld-linux-aarch64.so.1)" "$ROOT/lib/ld-linux-aarch64.so.1"
modules() {  # modules NAME LIST: the module and its dependencies, in insmod order, listed in LIST
  modprobe -d "${MODBASE%/lib/modules}" -S "$KVER" --show-depends "$1" | awk '$1 == "insmod" { print $2 }' | while read -r ko; do
    case $ko in
      *.xz) xz -dc "$ko" >"$ROOT/lib/modules/$(basename "${ko%.xz}")"; echo "/lib/modules/$(basename "${ko%.xz}")" ;;
      *) cp "$ko" "$ROOT/lib/modules/"; echo "/lib/modules/$(basename "$ko")" ;;
    esac
  done >>"$ROOT/lib/modules/$2"
}
# rtc-pl031 as a module: loaded by the guest (not in the none case); built in: nothing to load.
if modprobe -d "${MODBASE%/lib/modules}" -S "$KVER" --show-depends rtc-pl031 2>/dev/null | grep -q '^insmod'; then modules rtc-pl031 rtc.list; fi
for m in virtio_pci virtio_net; do
  modprobe -d "${MODBASE%/lib/modules}" -S "$KVER" --show-depends "$m" 2>/dev/null | grep -q '^insmod' && modules "$m" net.list
done
touch "$ROOT/lib/modules/net.list"
echo 'root:x:0:0:root:/tmp:/bin/sh' >"$ROOT/etc/passwd"
echo 'root:x:0:' >"$ROOT/etc/group"
cp "$VMDIR/clock-guest.sh" "$ROOT/init"
chmod +x "$ROOT/init"
(cd "$ROOT" && find . | cpio -o -H newc --quiet) >"$W/initrd.cpio"
# The host's chronyd for the NTP server: the x86 VM tier's (.cache/vm), else downloaded here.
CHRONYD=$VMDIR/../../.cache/vm/chrony/usr/sbin/chronyd
if [ ! -x "$CHRONYD" ]; then
  mkdir -p "$W/chrony-host" && (cd "$W/chrony-host" && apt-get -o APT::Sandbox::User=root download -q chrony >/dev/null) &&
    dpkg-deb -x "$W"/chrony-host/chrony_*.deb "$W/chrony-host/x" && CHRONYD=$W/chrony-host/x/usr/sbin/chronyd || die "no chronyd for the host"
fi

LOGS=$CACHE/clock
mkdir -p "$LOGS"
boot() {  # boot CASE INITRD APPEND QEMU-ARGS...
  local name=$1 initrd=$2 append=$3 t0 status
  shift 3
  t0=$(date +%s)
  set +e
  timeout "${KIOSK_VM_CLOCK_TIMEOUT:-600}" qemu-system-aarch64 -M virt -cpu cortex-a72 -smp 1 -m 1024 -accel tcg,thread=multi \
    -kernel "$VMLINUZ" -initrd "$initrd" \
    -append "console=ttyAMA0 rdinit=/init quiet loglevel=3 panic=-1 clock_case=$name $append" \
    -display none -serial stdio -monitor none -no-reboot -nodefaults "$@" </dev/null 2>&1 |
    tr -d '\r' | tee "$LOGS/$name.log" | grep --line-buffered -E '^(PASS|FAIL|INFO) '
  status=${PIPESTATUS[0]}
  set -e
  echo "INFO vm-arm64-clock: $name: QEMU status $status in $(( $(date +%s) - t0 )) s (console in $LOGS/$name.log)"
  grep -q "^RESULT clock-$name failed=0" "$LOGS/$name.log" ||
    { grep -q '^FAIL ' "$LOGS/$name.log" || { echo "FAIL vm-arm64-clock: $name: no verdict (status $status)"; tail -5 "$LOGS/$name.log"; }; }
}

rtc_at() {  # rtc_at TIME [network]: the PL031 at TIME, no network unless asked
  echo -rtc "base=$1"
  [ "${2:-}" = network ] || echo -nic none
}
NIC=virtio-net-pci
boot_none() { boot none "$1" "initcall_blacklist=pl031_driver_init" -nic none; }
run_cases "${CASES[@]}"
