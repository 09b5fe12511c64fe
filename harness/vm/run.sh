#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The driver tier: the built `kiosk` against real kernel drivers (vivid for V4L2, gpio-sim for
# GPIO, vimc for libcamera, uvcvideo on the UVC gadget over dummy_hcd for a webcam's controls) in a
# QEMU VM booted from Debian's own kernel. See docs/vm-tests.md.
#
#   harness/vm/run.sh [--require] [--gpiod2]
#   harness/vm/run.sh --powercut [--full] [--require]     (harness/powercut/run.sh)
#
# --gpiod2: in the same boot, after every group, the GPIO checks (groups gpio, torch, doctor, inputs)
# again with the kiosk built in the trixie root (harness/trixie/run.sh: libgpiod v2, swiftlang),
# trixie's libraries and v2 command-line tools: a second root in the initramfs (/gpiod2) that the
# guest enters with chroot, on the same kernel, vivid and gpio-sim: the shim's v2 path on real lines.
#
# Everything it downloads or builds is cached under $KIOSK_VM_CACHE (default: .cache/vm in the
# repository). It prints one PASS/FAIL line per check and ends with "N passed, M failed"; exit 0
# when nothing failed. When it cannot run here (not x86-64 Linux, no QEMU and no way to install it,
# KIOSK_VM=0) it prints one "SKIP vm: why" line and exits 0, or 1 with --require / KIOSK_VM_REQUIRE=1
# (the default when CI is set). A SKIP from the guest fails unless harness/vm/expected-skips lists it.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
. "$HERE/modules.sh"
. "$HERE/initramfs.sh"
CACHE=${KIOSK_VM_CACHE:-$REPO/.cache/vm}
# In CI (CI set) a machine that cannot run the VM fails the tier: a missing tool is no pass there.
REQUIRE=${KIOSK_VM_REQUIRE:-${CI:+1}}
REQUIRE=${REQUIRE:-0}
GPIOD2=0
# --powercut: power cuts under dm-log-writes instead (harness/powercut/run.sh, its own options after).
[ "${1:-}" = --powercut ] && { shift; exec "$REPO/harness/powercut/run.sh" "$@"; }
for arg in "$@"; do
  case $arg in
    --require) REQUIRE=1 ;;
    --gpiod2) GPIOD2=1 ;;
    *) echo "usage: $0 [--require] [--gpiod2]" >&2; exit 64 ;;
  esac
done
APPEND=${KIOSK_VM_APPEND:-}            # extra kernel command line (e.g. vmexplore: dump driver info)
BINARY=${KIOSK_VM_BINARY:-}            # test this kiosk binary instead of building one
VM=${KIOSK_VM:-1}
TIMEOUT_S=${KIOSK_VM_TIMEOUT:-1200}    # the whole VM run, boot to verdict: a guard against a hung guest (3-5 minutes alone; over 10 on this machine beside two builds)
# The kiosk warns about unknown KIOSK_* variables: keep this tier's own out of its environment.
# Nor the Makefile's own (`make test-vm` exports KIOSK_PEERS_PYTHON for the test peers): the kiosk
# rightly warns about it, and the host checks that compare `kiosk decode`'s output saw the warning.
for v in $(compgen -e | grep -E '^KIOSK_(VM|PEERS_PYTHON$)'); do unset "$v"; done
export PATH=$PATH:/opt/swift/usr/bin

# The Debian packages this tier needs on the host (installed if missing, nothing else is touched).
# The kernel itself (linux-image-*) and linux-source-6.1 are only downloaded and unpacked into the
# cache, never installed.
VM_PACKAGES="qemu-system-x86 busybox-static v4l-utils gpiod cpio zint kmod linux-headers-amd64
  python3 gcc make libc6-dev xz-utils libjpeg-turbo-progs patch g++ pkg-config libcamera-dev libcamera-ipa"

t_start=$(date +%s%N)
stamp() { local ms=$(( ($(date +%s%N) - t_start) / 1000000 )); printf 'vm: +%d.%ds %s\n' $((ms / 1000)) $((ms % 1000 / 100)) "$*"; }
skip() {
  echo "SKIP vm: $*"
  if [ "$REQUIRE" = 1 ]; then echo "0 passed, 1 failed"; exit 1; fi
  exit 0
}
die() { echo "FAIL vm: $*"; echo "0 passed, 1 failed"; exit 1; }

[ "$VM" = 0 ] && { echo "SKIP vm: KIOSK_VM=0"; exit 0; }
[ "$(uname -s)-$(uname -m)" = Linux-x86_64 ] || skip "needs x86-64 Linux (this is $(uname -s)-$(uname -m))"
command -v dpkg-query >/dev/null && command -v apt-get >/dev/null || skip "needs Debian (dpkg, apt-get)"

# --- host packages -------------------------------------------------------------------------------
# shellcheck disable=SC2086  # the package names are words
"$REPO/harness/host-packages.sh" --log "${TMPDIR:-/tmp}/kiosk-vm-apt.log" vm $VM_PACKAGES \
  || skip "could not install its Debian packages (see above)"
command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 not found"
stamp "host packages present"

# --- the kernel: Debian's, matching linux-headers-amd64 ------------------------------------------
KVER=$(dpkg-query -W -f='${Depends}' linux-headers-amd64 | sed -n 's/.*linux-headers-\([^ ]*\) .*/\1/p')
KPKGVER=$(dpkg-query -W -f='${Version}' "linux-headers-$KVER")
KSRC_PKG="linux-source-${KVER%%.0-*}"          # 6.1.0-57-amd64 -> linux-source-6.1
KDIR=/usr/src/linux-headers-$KVER
[ -d "$KDIR" ] || die "no kernel headers at $KDIR"
K=$CACHE/kernel-$KVER-$KPKGVER
mkdir -p "$CACHE/debs"
fetch() {  # fetch PACKAGE=VERSION: apt-get download into the cache, print the .deb path
  local name=${1%%=*} ver=${1#*=} deb
  deb=$(ls "$CACHE/debs/${name}_${ver}_"*.deb 2>/dev/null | head -1 || true)
  if [ -z "$deb" ]; then
    (cd "$CACHE/debs" && apt-get -o APT::Sandbox::User=root download -q "$1" >/dev/null) || die "apt-get download $1 failed"
    deb=$(ls "$CACHE/debs/${name}_${ver}_"*.deb | head -1)
  fi
  echo "$deb"
}
if [ ! -e "$K/kroot.done" ]; then
  rm -rf "$K/kroot" && mkdir -p "$K"
  dpkg-deb -x "$(fetch "linux-image-$KVER=$KPKGVER")" "$K/kroot"
  touch "$K/kroot.done"
  stamp "kernel $KVER unpacked"
fi
VMLINUZ=$K/kroot/boot/vmlinuz-$KVER
MODDIR=$K/kroot/lib/modules/$KVER

# --- the kernel sources of the out-of-tree modules (Debian builds neither CONFIG_GPIO_SIM nor
# CONFIG_VIDEO_VIMC): one pass over linux-source's .deb (140 MB) for whichever is not built yet;
# the .deb and the sources are deleted once both are built.
VIMC_STAMP=$(sha256sum "$HERE/vimc-inject.patch" | cut -c1-16)   # a new patch rebuilds vimc
vimc_built() { [ "$(cat "$K/vimc.done" 2>/dev/null)" = "$VIMC_STAMP" ]; }
UVC_STAMP=$(sha256sum "$HERE/uvc-gadget.patch" | cut -c1-16)     # and a new one usb_f_uvc
uvc_built() { [ "$(cat "$K/uvc.done" 2>/dev/null)" = "$UVC_STAMP" ]; }
KS=$K/linux-source
ksrc=""
[ -e "$K/gpio-sim.done" ] || ksrc=$OOT_GPIO_SIM_FILES
vimc_built || ksrc="$ksrc $OOT_VIMC_FILES"
uvc_built || ksrc="$ksrc $OOT_UVC_FILES"
if [ -n "$ksrc" ]; then
  dpkg-deb --fsys-tarfile "$(fetch "$KSRC_PKG=$KPKGVER")" | tar -xO "./usr/src/$KSRC_PKG.tar.xz" |
    oot_unpack_source "$KSRC_PKG" "$KS" $ksrc
  stamp "linux-source unpacked:$(for f in $ksrc; do printf ' %s' "${f##*/}"; done)"
fi

# --- gpio-sim, out of tree (harness/vm/modules.sh) -------------------------------------------------
if [ ! -e "$K/gpio-sim.done" ]; then
  oot_build_gpio_sim "$KS" "$KDIR" "$K"
  mkdir -p "$MODDIR/updates" && cp "$K/gpio-sim.ko" "$K/irq_sim.ko" "$MODDIR/updates/"
  depmod -b "$K/kroot" "$KVER"
  touch "$K/gpio-sim.done"
  stamp "gpio-sim built"
fi

# --- vimc, out of tree, with the frame-injection patch (vimc-inject.patch): libcamera's test camera
if ! vimc_built; then
  oot_build_vimc "$KS" "$KDIR" "$HERE/vimc-inject.patch" "$K" strip
  mkdir -p "$MODDIR/updates" && cp "$K/vimc.ko" "$MODDIR/updates/vimc.ko"
  depmod -b "$K/kroot" "$KVER"
  echo "$VIMC_STAMP" >"$K/vimc.done"
  stamp "vimc built"
fi
# --- usb_f_uvc, out of tree, with uvc-gadget.patch: the UVC gadget the uvc group's webcam is ------
if ! uvc_built; then
  oot_build_uvc "$KS" "$KDIR" "$HERE/uvc-gadget.patch" "$K" strip
  mkdir -p "$MODDIR/updates" && cp "$K/usb_f_uvc.ko" "$MODDIR/updates/usb_f_uvc.ko"
  depmod -b "$K/kroot" "$KVER"
  echo "$UVC_STAMP" >"$K/uvc.done"
  stamp "usb_f_uvc built"
fi
if [ -n "$ksrc" ]; then
  rm -rf "$KS" "$CACHE/debs/${KSRC_PKG}_"*.deb   # the few files were all they were for
fi

# --- v4l2loopback: an MJPG camera (vivid has none); Debian's DKMS source, built by hand ----------
if [ ! -e "$K/v4l2loopback.done" ]; then
  rm -rf "$K/v4l2loopback" && mkdir -p "$K/v4l2loopback"
  dpkg-deb -x "$(fetch "v4l2loopback-dkms=$(apt-cache show v4l2loopback-dkms | sed -n 's/^Version: //p' | head -1)")" "$K/v4l2loopback"
  lsrc=$(ls -d "$K"/v4l2loopback/usr/src/v4l2loopback-*)
  make -s -C "$KDIR" M="$lsrc" modules >"$K/v4l2loopback/build.log" 2>&1 || { cat "$K/v4l2loopback/build.log"; die "v4l2loopback did not build"; }
  mkdir -p "$MODDIR/updates" && cp "$lsrc/v4l2loopback.ko" "$MODDIR/updates/"
  depmod -b "$K/kroot" "$KVER"
  touch "$K/v4l2loopback.done"
  stamp "v4l2loopback built"
fi

# --- the kiosk: release, Swift runtime linked in -------------------------------------------------
KIOSK_BIN=$BINARY
if [ -z "$KIOSK_BIN" ]; then
  command -v swift >/dev/null || skip "swift not found (or give a binary in KIOSK_VM_BINARY)"
  # The checkout's release build (make release's flags and folder): nothing to do after make test.
  (cd "$REPO" && swift build -c release --static-swift-stdlib --product kiosk \
     >"$CACHE/swift-build.log" 2>&1) || { tail -30 "$CACHE/swift-build.log"; die "swift build failed"; }
  KIOSK_BIN=$REPO/.build/release/kiosk
  stamp "kiosk built"
fi
# With --gpiod2, the trixie root's own release build (make release there: the trixie tier's),
# brought up to date; its libraries and tools come from that root (TRIXIE).
TRIXIE= TRIXIE_BIN=
if [ "$GPIOD2" = 1 ]; then
  TRIXIE=$("$REPO/harness/trixie/run.sh" --root | tail -1)
  [ -d "$TRIXIE/usr/bin" ] || die "no trixie root ($TRIXIE)"
  "$REPO/harness/trixie/run.sh" -- swift build -c release --static-swift-stdlib --product kiosk \
     >"$CACHE/swift-build-trixie.log" 2>&1 || { tail -30 "$CACHE/swift-build-trixie.log"; die "swift build in the trixie root failed"; }
  TRIXIE_BIN=$TRIXIE/work/kiosk/.build/release/kiosk
  [ -x "$TRIXIE_BIN" ] || die "no kiosk binary at $TRIXIE_BIN"
  stamp "kiosk built in the trixie root"
fi
[ -x "$KIOSK_BIN" ] || die "no kiosk binary at $KIOSK_BIN"

# --- the libcamera plugin and lc-probe, built against this machine's libcamera (group libcamera) --
LCDIR=$CACHE/libcamera
mkdir -p "$LCDIR"
(cd "$LCDIR" && make -f "$REPO/plugins/libcamera/Makefile" kiosk-libcamera.so lc-probe) >"$LCDIR/build.log" 2>&1 ||
  { cat "$LCDIR/build.log"; die "the libcamera plugin did not build"; }
stamp "libcamera plugin and lc-probe built (or up to date)"

# --- frames and a host-side sanity check of them -------------------------------------------------
W=$(mktemp -d "${TMPDIR:-/tmp}/kiosk-vm.XXXXXX")
trap 'rm -rf "$W"' EXIT
ROOT=$W/root
mkdir -p "$ROOT/frames"
python3 "$HERE/frames.py" "$ROOT/frames" >"$ROOT/frames/frames.list"
host_pass=0 host_fail=0
host_passed=0   # host PASS lines printed
for pgm in "$ROOT"/frames/*-GREY-*.pgm "$ROOT"/frames/*-BGR888-*.pgm; do
  want=$(awk -v n="$(basename "$pgm" .pgm)" '$1 == n { print $5 ": " $6 }' "$ROOT/frames/frames.list")
  if "$KIOSK_BIN" decode --roi 0.25,0.25,0.5,0.5 "$pgm" | grep -qxF "$pgm: $want"; then
    host_pass=$((host_pass + 1))
  else
    echo "FAIL host: $(basename "$pgm") does not decode to \"$want\" with kiosk decode"; host_fail=$((host_fail + 1))
  fi
done
if [ -n "$("$KIOSK_BIN" decode --roi 0.25,0.25,0.5,0.5 "$ROOT"/frames/outside-*.pgm)" ]; then
  echo "FAIL host: the out-of-ROI frame decodes inside the ROI"; host_fail=$((host_fail + 1))
else
  host_pass=$((host_pass + 1))
fi
[ "$host_fail" = 0 ] && { echo "PASS host: the test frames decode with kiosk decode (and the corner one not in the ROI)"; host_passed=1; }
cjpeg -quality 90 "$ROOT/frames/qr-RGB-640x480.ppm" >"$ROOT/frames/qr-MJPG-640x480.jpg" || die "cjpeg failed"
rm -f "$ROOT"/frames/*.pgm "$ROOT"/frames/*.ppm

# --- the initramfs -------------------------------------------------------------------------------
tools="/usr/bin/v4l2-ctl /usr/bin/gpioset /usr/bin/gpioget /usr/bin/gpioinfo /usr/bin/gpiodetect"
# populate DIR SYSROOT KIOSK [EXTRA...]: a root at DIR with busybox, the guest's helpers, the
# kiosk (stripped), the command-line tools and libv4l's plugins of SYSROOT ("" for this machine)
# and every library they and EXTRA need as SYSROOT resolves them (ldd, chrooted for a root).
populate() {
  local dir=$1 sysroot=$2 kiosk=$3 plugins f; shift 3
  mkdir -p "$dir"/{bin,sbin,usr/bin,proc,sys,dev,tmp,run,frames,harness}
  cp /bin/busybox "$dir/bin/busybox"
  ln -sf busybox "$dir/bin/sh"
  cp "$W/vmtool" "$W/uvc-gadget" "$dir/bin/"
  strip -o "$dir/bin/kiosk" "$kiosk"
  plugins=$(cd "$sysroot/" && ls usr/lib/x86_64-linux-gnu/libv4l/plugins/*.so 2>/dev/null | sed 's|^|/|' || true)
  for f in $tools; do cp "$sysroot$f" "$dir/usr/bin/" || die "no $sysroot$f"; done
  for f in $plugins; do mkdir -p "$dir$(dirname "$f")" && cp -L "$sysroot$f" "$dir$f"; done
  initramfs_libs "$dir" "$sysroot" "$dir/bin/kiosk" $tools $plugins "$@" || die "the libraries of $dir/bin/kiosk"
  cp "$HERE/guest-tests.sh" "$dir/harness/"
}
gcc -O2 -static -o "$W/vmtool" "$HERE/vmtool.c"
gcc -O2 -static -Wall -o "$W/uvc-gadget" "$HERE/uvc-gadget.c"
mkdir -p "$ROOT/lib/modules/$KVER/deps"
# libcamera: the plugin, lc-probe, vimc's IPA module (with its signature: unsigned, libcamera would
# run it in a separate process through its proxy) and its configuration; their libraries through
# populate's ldd. (No udevd: the guest writes the udev database entries libcamera looks for, see udev_db.)
LCLIB=$(pkg-config --variable=libdir libcamera)/libcamera
mkdir -p "$ROOT/usr/lib/kiosk" "$ROOT$LCLIB" "$ROOT/usr/share/libcamera/ipa" "$ROOT/usr/bin"
strip -o "$ROOT/usr/lib/kiosk/kiosk-libcamera.so" "$LCDIR/kiosk-libcamera.so"
strip -o "$ROOT/usr/bin/lc-probe" "$LCDIR/lc-probe"
cp "$LCLIB/ipa_vimc.so" "$LCLIB/ipa_vimc.so.sign" "$LCLIB/vimc_ipa_proxy" "$ROOT$LCLIB/" || die "no vimc IPA in $LCLIB (libcamera-ipa)"
cp -r /usr/share/libcamera/ipa/vimc "$ROOT/usr/share/libcamera/ipa/"
populate "$ROOT" "" "$KIOSK_BIN" "$ROOT/usr/lib/kiosk/kiosk-libcamera.so" "$LCLIB/ipa_vimc.so" "$LCLIB/vimc_ipa_proxy"
# The second root, entered by the guest after its groups (guest-tests.sh, "libgpiod v2").
if [ -n "$TRIXIE" ]; then
  populate "$ROOT/gpiod2" "$TRIXIE" "$TRIXIE_BIN"
  echo "$KVER" >"$ROOT/gpiod2/harness/kernel"
fi
# Modules, with each one's insmod order for the guest's `load`.
initramfs_modules "$K/kroot" "$KVER" "$ROOT" vivid gpio-sim v4l2loopback vimc dummy_hcd usb_f_uvc uvcvideo || die "the modules"
cp "$HERE/init.sh" "$ROOT/init"
chmod +x "$ROOT/init"
echo "$KVER" >"$ROOT/harness/kernel"
initramfs_pack "$ROOT" "$W/initrd.cpio"
stamp "initramfs $(du -m "$W/initrd.cpio" | cut -f1) MB"

# --- boot -------------------------------------------------------------------------------------
LOG=$CACHE/last-run.log
vm_boot "$LOG" "PASS|FAIL|SKIP|INFO" "$TIMEOUT_S" 1024 "$W/initrd.cpio" "$APPEND"
status=$VM_STATUS
stamp "VM finished (QEMU status $status; console in $LOG)"

# The snapshot the guest took (group snapshot), copied out through the console in base64.
if grep -q '^SNAPSHOT-END$' "$LOG"; then
  sed -n '/^SNAPSHOT-BEGIN$/,/^SNAPSHOT-END$/p' "$LOG" | sed '1d;$d' | base64 -d >"$CACHE/snapshot.png" 2>/dev/null
  got=$("$KIOSK_BIN" decode "$CACHE/snapshot.png" 2>&1)
  if [ "$got" = "$CACHE/snapshot.png: QR-Code: KIOSK-VM-QR-0001" ]; then
    echo "PASS host: the guest's snapshot, copied out through the console to $CACHE/snapshot.png, decodes"
    host_passed=$((host_passed + 1))
  else
    echo "FAIL host: the guest's snapshot copied out to $CACHE/snapshot.png: kiosk decode gave: ${got:-nothing}"; host_fail=$((host_fail + 1))
  fi
fi

# The luma the libcamera plugin grabbed from vimc with the QR frame injected (group libcamera), as
# a gzipped PGM in base64.
if grep -q '^LCPGM-END$' "$LOG"; then
  sed -n '/^LCPGM-BEGIN$/,/^LCPGM-END$/p' "$LOG" | sed '1d;$d' | base64 -d 2>/dev/null | gunzip >"$CACHE/libcamera-qr.pgm" 2>/dev/null
  got=$("$KIOSK_BIN" decode "$CACHE/libcamera-qr.pgm" 2>&1)
  if [ "$got" = "$CACHE/libcamera-qr.pgm: QR-Code: KIOSK-VM-LC-0001" ]; then
    echo "PASS host: the luma lc-probe grabbed through libcamera from vimc, copied out to $CACHE/libcamera-qr.pgm, decodes"
    host_passed=$((host_passed + 1))
  else
    echo "FAIL host: the libcamera grab copied out to $CACHE/libcamera-qr.pgm: kiosk decode gave: ${got:-nothing}"; host_fail=$((host_fail + 1))
  fi
fi

# The clock group: four boots of its own with the same kiosk (harness/vm/clock.sh).
clock_pass=0 clock_fail=0
rm -f "$CACHE/last-run-clock.log"
KIOSK_VM_BINARY=$KIOSK_BIN KIOSK_VM_CACHE=$CACHE "$HERE/clock.sh" 2>&1 | tee "$CACHE/last-run-clock.log" | grep -E '^(PASS|FAIL|SKIP) ' || true
clock_pass=$(grep -c '^PASS ' "$CACHE/last-run-clock.log" || true)
clock_fail=$(grep -c '^FAIL ' "$CACHE/last-run-clock.log" || true)

# The guest's and the clock group's SKIP lines: each a failure unless harness/vm/expected-skips
# lists it (`TEXT | REASON`, TEXT the SKIP line's words up to its first colon).
while IFS= read -r line; do
  what=${line#SKIP }; what=${what%%:*}
  if ! grep -v '^#' "$HERE/expected-skips" 2>/dev/null | awk -F' [|] ' -v w="$what" '$1 == w && $2 != "" { found = 1 } END { exit !found }'; then
    echo "FAIL vm: skipped, and this tier does not expect it (harness/vm/expected-skips): ${line#SKIP }"
    host_fail=$((host_fail + 1))
  fi
done < <(cat "$LOG" "$CACHE/last-run-clock.log" 2>/dev/null | grep '^SKIP ' || true)
passed=$(( $(grep -c '^PASS ' "$LOG" || true) + host_passed + clock_pass ))
failed=$(( $(grep -c '^FAIL ' "$LOG" || true) + host_fail + clock_fail ))
guest=$(grep -E '^RESULT [0-9]+ passed, [0-9]+ failed$' "$LOG" | tail -1 || true)
case $status in
  1) [ -n "$guest" ] || { echo "FAIL vm: guest passed but printed no RESULT line"; failed=$((failed + 1)); } ;;
  3) [ "$failed" -gt 0 ] || { echo "FAIL vm: guest reported failure without a FAIL line"; failed=$((failed + 1)); } ;;
  124) echo "FAIL vm: timed out after ${TIMEOUT_S}s, the last check seen: $(grep -E '^(PASS|FAIL|INFO) ' "$LOG" | tail -1 | cut -c1-160) (see $LOG)"; failed=$((failed + 1)) ;;
  *) echo "FAIL vm: QEMU ended with status $status, not a verdict (see $LOG)"; tail -20 "$LOG"; failed=$((failed + 1)) ;;
esac
# The last line names what failed, so that a CI log's tail says it.
names=$( { grep -h '^FAIL ' "$LOG" "$CACHE/last-run-clock.log" 2>/dev/null || true; [ "$host_fail" = 0 ] || echo "FAIL host:"; [ "$failed" -le $(( $(grep -c '^FAIL ' "$LOG" || true) + host_fail + clock_fail )) ] || echo "FAIL vm:"; } |
  sed 's/^FAIL \([^:]*\):.*/\1/' | sort -u | paste -sd, | sed 's/,/, /g' | cut -c1-300)
echo "$passed passed, $failed failed${names:+ (failed: $names)}"
[ "$failed" = 0 ]
