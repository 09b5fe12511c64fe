#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The driver tier: the built `kiosk` against real kernel drivers (vivid for V4L2, gpio-sim for
# GPIO, vimc for libcamera, uvcvideo on the UVC gadget over dummy_hcd for a webcam's controls) in a
# QEMU VM booted from Debian's own kernel. See docs/vm-tests.md.
#
#   harness/vm/run.sh [--require] [--gpiod2]
#   harness/vm/run.sh --powercut [--full] [--require]     (harness/powercut/run.sh)
#
# --gpiod2: the GPIO checks (groups gpio, torch, doctor, inputs) again, with the kiosk built in the trixie
# root (harness/trixie/run.sh: libgpiod v2, swiftlang) and trixie's libraries and v2 command-line
# tools in the initramfs, on the same kernel and gpio-sim: the shim's v2 path on real lines.
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
# SYSROOT is where the kiosk's libraries and the command-line tools come from: this machine, or
# with --gpiod2 the trixie root the kiosk was built in.
SYSROOT=
KIOSK_BIN=$BINARY
if [ "$GPIOD2" = 1 ]; then
  SYSROOT=$("$REPO/harness/trixie/run.sh" --root | tail -1)
  [ -d "$SYSROOT/usr/bin" ] || die "no trixie root ($SYSROOT)"
  # The root's own release build (make release there: the trixie tier's), brought up to date.
  "$REPO/harness/trixie/run.sh" -- swift build -c release --static-swift-stdlib --product kiosk \
     >"$CACHE/swift-build-trixie.log" 2>&1 || { tail -30 "$CACHE/swift-build-trixie.log"; die "swift build in the trixie root failed"; }
  KIOSK_BIN=$SYSROOT/work/kiosk/.build/release/kiosk
  APPEND="VM_GROUPS=gpio,torch,doctor,inputs $APPEND"
  stamp "kiosk built in the trixie root"
elif [ -z "$KIOSK_BIN" ]; then
  command -v swift >/dev/null || skip "swift not found (or give a binary in KIOSK_VM_BINARY)"
  # The checkout's release build (make release's flags and folder): nothing to do after make test.
  (cd "$REPO" && swift build -c release --static-swift-stdlib --product kiosk \
     >"$CACHE/swift-build.log" 2>&1) || { tail -30 "$CACHE/swift-build.log"; die "swift build failed"; }
  KIOSK_BIN=$REPO/.build/release/kiosk
  stamp "kiosk built"
fi
[ -x "$KIOSK_BIN" ] || die "no kiosk binary at $KIOSK_BIN"

# --- the libcamera plugin and lc-probe, built against this machine's libcamera (group libcamera) --
# Not with --gpiod2: its groups do not use them (and its libraries come from the trixie root).
LCDIR=$CACHE/libcamera
if [ -z "$SYSROOT" ]; then
  mkdir -p "$LCDIR"
  (cd "$LCDIR" && make -f "$REPO/plugins/libcamera/Makefile" kiosk-libcamera.so lc-probe) >"$LCDIR/build.log" 2>&1 ||
    { cat "$LCDIR/build.log"; die "the libcamera plugin did not build"; }
  stamp "libcamera plugin and lc-probe built (or up to date)"
fi

# --- frames and a host-side sanity check of them -------------------------------------------------
W=$(mktemp -d "${TMPDIR:-/tmp}/kiosk-vm.XXXXXX")
trap 'rm -rf "$W"' EXIT
ROOT=$W/root
mkdir -p "$ROOT/frames"
python3 "$HERE/frames.py" "$ROOT/frames" >"$ROOT/frames/frames.list"
host_pass=0 host_fail=0
host_passed=0   # host PASS lines printed
# The trixie-built kiosk needs trixie's C library: the frames were checked by the bookworm run.
[ -n "$SYSROOT" ] || for pgm in "$ROOT"/frames/*-GREY-*.pgm "$ROOT"/frames/*-BGR888-*.pgm; do
  want=$(awk -v n="$(basename "$pgm" .pgm)" '$1 == n { print $5 ": " $6 }' "$ROOT/frames/frames.list")
  if "$KIOSK_BIN" decode --roi 0.25,0.25,0.5,0.5 "$pgm" | grep -qxF "$pgm: $want"; then
    host_pass=$((host_pass + 1))
  else
    echo "FAIL host: $(basename "$pgm") does not decode to \"$want\" with kiosk decode"; host_fail=$((host_fail + 1))
  fi
done
if [ -z "$SYSROOT" ]; then
  if [ -n "$("$KIOSK_BIN" decode --roi 0.25,0.25,0.5,0.5 "$ROOT"/frames/outside-*.pgm)" ]; then
    echo "FAIL host: the out-of-ROI frame decodes inside the ROI"; host_fail=$((host_fail + 1))
  else
    host_pass=$((host_pass + 1))
  fi
  [ "$host_fail" = 0 ] && { echo "PASS host: the test frames decode with kiosk decode (and the corner one not in the ROI)"; host_passed=1; }
fi
cjpeg -quality 90 "$ROOT/frames/qr-RGB-640x480.ppm" >"$ROOT/frames/qr-MJPG-640x480.jpg" || die "cjpeg failed"
rm -f "$ROOT"/frames/*.pgm "$ROOT"/frames/*.ppm

# --- the initramfs -------------------------------------------------------------------------------
mkdir -p "$ROOT"/{bin,sbin,usr/bin,proc,sys,dev,tmp,run,lib/modules/"$KVER"/deps,harness}
cp /bin/busybox "$ROOT/bin/busybox"
ln -s busybox "$ROOT/bin/sh"
gcc -O2 -static -o "$ROOT/bin/vmtool" "$HERE/vmtool.c"
gcc -O2 -static -Wall -o "$ROOT/bin/uvc-gadget" "$HERE/uvc-gadget.c"
strip -o "$ROOT/bin/kiosk" "$KIOSK_BIN"
tools="/usr/bin/v4l2-ctl /usr/bin/gpioset /usr/bin/gpioget /usr/bin/gpioinfo /usr/bin/gpiodetect"
plugins=$(cd "$SYSROOT/" && ls usr/lib/x86_64-linux-gnu/libv4l/plugins/*.so 2>/dev/null | sed 's|^|/|' || true)
for t in $tools; do cp "$SYSROOT$t" "$ROOT/usr/bin/" || die "no $SYSROOT$t"; done
# libcamera: the plugin, lc-probe, vimc's IPA module (with its signature: unsigned, libcamera would
# run it in a separate process through its proxy) and its configuration; the libraries through ldd.
# (No udevd: the guest writes the udev database entries libcamera looks for, see udev_db.)
lcfiles=
if [ -z "$SYSROOT" ]; then
  LCLIB=$(pkg-config --variable=libdir libcamera)/libcamera
  mkdir -p "$ROOT/usr/lib/kiosk" "$ROOT$LCLIB" "$ROOT/usr/share/libcamera/ipa"
  strip -o "$ROOT/usr/lib/kiosk/kiosk-libcamera.so" "$LCDIR/kiosk-libcamera.so"
  strip -o "$ROOT/usr/bin/lc-probe" "$LCDIR/lc-probe"
  cp "$LCLIB/ipa_vimc.so" "$LCLIB/ipa_vimc.so.sign" "$LCLIB/vimc_ipa_proxy" "$ROOT$LCLIB/" || die "no vimc IPA in $LCLIB (libcamera-ipa)"
  cp -r /usr/share/libcamera/ipa/vimc "$ROOT/usr/share/libcamera/ipa/"
  lcfiles="$ROOT/usr/lib/kiosk/kiosk-libcamera.so $LCLIB/ipa_vimc.so $LCLIB/vimc_ipa_proxy"
fi
# ldd of the kiosk and the tools, as their own system resolves them (chroot into the trixie root).
needed() {
  if [ -n "$SYSROOT" ]; then
    cp "$ROOT/bin/kiosk" "$SYSROOT/tmp/kiosk-vm-ldd"
    chroot "$SYSROOT" ldd /tmp/kiosk-vm-ldd $tools $plugins; rm -f "$SYSROOT/tmp/kiosk-vm-ldd"
  else ldd "$ROOT/bin/kiosk" $tools $plugins $lcfiles; fi
}
for f in $(needed 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// && $2 ~ /^\(0x/ { print $1 }' | sort -u) $plugins; do
  [ -e "$ROOT$f" ] || { mkdir -p "$ROOT$(dirname "$f")" && cp -L "$SYSROOT$f" "$ROOT$f"; }
done
# Modules: each one's insmod order (dependencies first), for the guest's `load`.
for m in vivid gpio-sim v4l2loopback vimc dummy_hcd usb_f_uvc uvcvideo; do
  modprobe -d "$K/kroot" -S "$KVER" --show-depends "$m" | awk '$1 == "insmod" { print $2 }' |
  while read -r ko; do
    rel=${ko#"$MODDIR"/}
    mkdir -p "$ROOT/lib/modules/$KVER/$(dirname "$rel")"
    cp "$ko" "$ROOT/lib/modules/$KVER/$rel"
    echo "/lib/modules/$KVER/$rel"
  done >"$ROOT/lib/modules/$KVER/deps/$m"
done
cp "$HERE/init.sh" "$ROOT/init"
cp "$HERE/guest-tests.sh" "$ROOT/harness/"
chmod +x "$ROOT/init"
echo "$KVER" >"$ROOT/harness/kernel"
(cd "$ROOT" && find . | cpio -o -H newc --quiet) >"$W/initrd.cpio"
stamp "initramfs $(du -m "$W/initrd.cpio" | cut -f1) MB"

# --- boot -------------------------------------------------------------------------------------
LOG=$CACHE/last-run.log
[ "$GPIOD2" = 1 ] && LOG=$CACHE/last-run-gpiod2.log
set +e
timeout "$TIMEOUT_S" qemu-system-x86_64 \
  -machine pc -accel tcg,thread=multi -cpu max -smp 2 -m 1024 \
  -kernel "$VMLINUZ" -initrd "$W/initrd.cpio" \
  -append "console=ttyS0 rdinit=/init quiet loglevel=3 panic=-1 $APPEND" \
  -device isa-debug-exit,iobase=0xf4,iosize=0x04 \
  -display none -serial stdio -monitor none -no-reboot -nodefaults </dev/null 2>&1 |
  tr -d '\r' | tee "$LOG" | grep --line-buffered -E '^(PASS|FAIL|SKIP|INFO) '
status=${PIPESTATUS[0]}
set -e
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
if [ -z "$SYSROOT" ]; then
  KIOSK_VM_BINARY=$KIOSK_BIN KIOSK_VM_CACHE=$CACHE "$HERE/clock.sh" 2>&1 | tee "$CACHE/last-run-clock.log" | grep -E '^(PASS|FAIL|SKIP) ' || true
  clock_pass=$(grep -c '^PASS ' "$CACHE/last-run-clock.log" || true)
  clock_fail=$(grep -c '^FAIL ' "$CACHE/last-run-clock.log" || true)
fi

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
