#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The arm64 VM tier: the arm64 .deb installed with apt and run by systemd on an emulated arm64
# machine (qemu-system-aarch64 -M virt -cpu cortex-a72, TCG), booted from Debian trixie's own arm64
# kernel, against real drivers: vivid (V4L2), gpio-sim (GPIO) and vimc (libcamera), the last two
# built out of tree for that kernel (harness/vm/modules.sh, as the amd64 tier builds them). See
# docs/vm-tests.md.
#
#   harness/vm-arm64/run.sh [--deb FILE]     (default: `make deb ARCH=arm64` of this checkout, built now)
#   harness/vm-arm64/run.sh --prepare        what needs no .deb: the host packages, the kernel and its
#                                          modules, the guest's root and its first boot (for the
#                                          Depends harness/vm-arm64/deb-depends lists); CI makes them
#                                          while the build and the tests run
#
# Everything comes from Debian's archive and is cached under $KIOSK_VM_ARM64_CACHE (default
# .cache/vm-arm64): the guest's root (trixie arm64 with systemd, apt, mosquitto, gpiod, v4l-utils,
# libcamera and the kiosk's Depends: unpacked here with mmdebstrap --variant=extract, installed by
# dpkg inside the guest on its first boot, then kept as a disk image); the kernel, its headers and
# the modules built for it; a busybox initramfs that mounts the disk. A run boots a copy-on-write
# overlay of that image, with a second small disk holding the .deb, the test frames, the plugin and
# the checks (harness/vm-arm64/guest.sh), which a unit in the image runs once systemd is up. No
# network in the guest. One PASS/FAIL line per check, then "N passed, M failed"; exit 0 only when
# nothing failed and the guest finished in time. No mounts or loop devices are used; the QEMU
# process and the scratch folder are removed on every way out.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
VMDIR=$REPO/harness/vm
. "$VMDIR/modules.sh"
CACHE=${KIOSK_VM_ARM64_CACHE:-$REPO/.cache/vm-arm64}
MIRROR=${KIOSK_DEBIAN_MIRROR:-http://deb.debian.org/debian}
TIMEOUT_S=${KIOSK_VM_ARM64_TIMEOUT:-1800}   # the test run (its boots: the setup group reboots 3 times; the keypad group about 4 min), from QEMU's start to the guest's verdict
BOOT_S=${KIOSK_VM_ARM64_BOOT:-240}         # ... of which the boot, to the checks' first line
FIRST_S=${KIOSK_VM_ARM64_FIRST:-2700}      # the first boot: dpkg installs the root's packages (NetworkManager, hostapd and the rest since the keypad and setup groups: 765 s here at load 8-10, beside CI's tiers at nice 19 longer)
APPEND=${KIOSK_VM_ARM64_APPEND:-}          # extra kernel command line (VM_BREAK=... sabotages a check)
SMP=${KIOSK_VM_ARM64_SMP:-2}
RUN_LOG=${KIOSK_VM_ARM64_LOG:-}            # the test run's console (default: the cache's last-run.log; two runs at once need two)
DEB= PREPARE=0
while [ $# -gt 0 ]; do
  case $1 in
    --deb) DEB=${2:?--deb needs a file}; shift ;;
    --prepare) PREPARE=1 ;;
    *) echo "usage: $0 [--deb FILE | --prepare]" >&2; exit 64 ;;
  esac
  shift
done
for v in $(compgen -e | grep '^KIOSK_VM_ARM64'); do unset "$v"; done
export PATH=$PATH:/opt/swift/usr/bin

t_start=$(date +%s%N)
stamp() { local ms=$(( ($(date +%s%N) - t_start) / 1000000 )); printf 'vm-arm64: +%d.%ds %s\n' $((ms / 1000)) $((ms % 1000 / 100)) "$*"; }
die() { echo "FAIL vm-arm64: $*"; echo "0 passed, 1 failed"; exit 1; }
[ "$(id -u)" = 0 ] || die "needs root (mmdebstrap, files owned by the guest's users)"

# --- scratch folder and QEMU: removed and stopped on every way out ----------------------------------
W=$(mktemp -d "${TMPDIR:-/tmp}/kiosk-vm-arm64.XXXXXX")
QPID=
cleanup() {
  if [ -n "$QPID" ] && kill -0 "$QPID" 2>/dev/null; then kill "$QPID" 2>/dev/null; sleep 1; kill -KILL "$QPID" 2>/dev/null || true; fi
  rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- host packages ------------------------------------------------------------------------------
HOST_PACKAGES="qemu-system-arm qemu-utils qemu-user mmdebstrap gcc-aarch64-linux-gnu e2fsprogs kmod xz-utils
  python3 zint dpkg-dev cpio"
# shellcheck disable=SC2086  # the package names are words
"$REPO/harness/host-packages.sh" --log "$W/apt.log" vm-arm64 $HOST_PACKAGES || die "could not install its host packages"
command -v clang++ >/dev/null && command -v ld.lld >/dev/null || die "no clang++/ld.lld (the Swift toolchain's) for the plugin's cross build"
stamp "host packages present"

# merged_usr ROOT: /bin, /sbin and /lib as links into /usr, as trixie has them (an extracted root
# may lack them: base-files is not unpacked, or not first).
merged_usr() {
  local d
  for d in bin sbin lib; do [ -e "$1/$d" ] || [ -L "$1/$d" ] || ln -s "usr/$d" "$1/$d"; done
}

# --- the kernel side: image, headers, linux-source, busybox, the plugin's libraries (extracted) ------
# One mmdebstrap --variant=extract of trixie arm64 (nothing runs); the kernel and headers are the
# same build, linux-source the same version (checked). The headers' host tools (fixdep, modpost)
# are arm64 programs: they run under qemu-user (no binfmt_misc: wrapper scripts).
BUILD_PACKAGES="linux-image-arm64 linux-headers-arm64 linux-source busybox-static libcamera-dev libstdc++-14-dev libc6-dev"
BKEY=$(echo "format=1 $BUILD_PACKAGES" | sha256sum | cut -c1-12)
B=$CACHE/build-$BKEY
if [ ! -e "$B.done" ]; then
  rm -rf "$CACHE"/build-* && mkdir -p "$B"
  stamp "unpacking the kernel, headers and sources (trixie arm64: $BUILD_PACKAGES)"
  mmdebstrap --variant=extract --architectures=arm64 --include="$(echo $BUILD_PACKAGES | tr ' ' ,)" \
    --extract-hook="\"$REPO/harness/arm64/sdk.sh\" --make-dpkg-db \"\$1\"" \
    trixie "$B" "$MIRROR" >"$CACHE/build-mmdebstrap.log" 2>&1 \
    || { tail -20 "$CACHE/build-mmdebstrap.log"; die "mmdebstrap (kernel side) failed"; }
  merged_usr "$B"
  depmod -b "$B" "$(ls "$B/usr/lib/modules")"
  touch "$B.done"
fi
KVER=$(ls "$B/lib/modules" 2>/dev/null | head -1 || ls "$B/usr/lib/modules" | head -1)
[ -n "$KVER" ] || die "no kernel modules in $B"
MODROOT=$B/usr/lib/modules
[ -d "$MODROOT/$KVER" ] || MODROOT=$B/lib/modules
VMLINUZ=$B/boot/vmlinuz-$KVER
KDIR=$B/usr/src/linux-headers-$KVER
[ -f "$VMLINUZ" ] && [ -d "$KDIR" ] || die "no vmlinuz or headers for $KVER in $B"
kimage_ver=$(awk '$1 == "linux-image-'"$KVER"'" { print $2 }' "$B/.packages.txt")
ksrc_pkg=$(awk '$1 ~ /^linux-source-[0-9.]+$/ { print $1 }' "$B/.packages.txt")
ksrc_ver=$(awk '$1 ~ /^linux-source-[0-9.]+$/ { print $2 }' "$B/.packages.txt")
[ -n "$kimage_ver" ] && [ "$kimage_ver" = "$ksrc_ver" ] || die "linux-image $kimage_ver and $ksrc_pkg $ksrc_ver differ"
stamp "kernel $KVER ($kimage_ver)"

# The headers' tools under qemu-user: each arm64 executable of linux-kbuild becomes a script that
# runs it (the .arm64 files are the originals, moved once). The scripts and the headers' Makefile
# name $B by its path, written again on each run: the cache may have been made by a clone at
# another path (CI's cache is shared by clones, its .cache a symlink into KIOSK_CI_CACHE).
# The headers' Makefile includes the common headers by their absolute path: here, under $B.
sed -i "s|^include .*/usr/src/linux-headers-|include $B/usr/src/linux-headers-|" "$KDIR/Makefile"
if [ ! -e "$B/kbuild-wrapped.done" ]; then
  for f in $(find "$B"/usr/lib/linux-kbuild-* -type f -perm -u+x); do
    case $(LC_ALL=C readelf -h "$f" 2>/dev/null | sed -n 's/^ *Machine: *//p') in
      AArch64) mv "$f" "$f.arm64" ;;
    esac
  done
  touch "$B/kbuild-wrapped.done"
fi
for f in $(find "$B"/usr/lib/linux-kbuild-* -type f -name '*.arm64'); do
  printf '#!/bin/sh\nexec qemu-aarch64 -L %s %s "$@"\n' "$B" "$f" >"${f%.arm64}"; chmod 755 "${f%.arm64}"
done
# Debian's modpost picks modpost.real-{lsb,msb}-{32,64} for the module's ELF class: under
# qemu-user it cannot find them; arm64 is lsb-64.
for mp in "$B"/usr/lib/linux-kbuild-*/scripts/mod/modpost; do
  [ -e "$mp.real-lsb-64.arm64" ] && printf '#!/bin/sh\nexec qemu-aarch64 -L %s %s.real-lsb-64.arm64 "$@"\n' "$B" "$mp" >"$mp"
done
# Bookworm's cross gcc is 12, the kernel was built with 14: gcc 12 lacks -fmin-function-alignment
# (the kernel then falls back to -falign-functions, the same alignment).
# No BTF for these modules (pahole; they load without it).
KMAKE="ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu- CC=aarch64-linux-gnu-gcc CONFIG_CC_HAS_MIN_FUNCTION_ALIGNMENT= CONFIG_DEBUG_INFO_BTF_MODULES="

# --- gpio-sim and vimc for that kernel (harness/vm/modules.sh, cross-compiled) --------------------------
K=$CACHE/modules-$KVER-$kimage_ver
VIMC_STAMP=$(cat "$VMDIR/vimc-inject.patch" "$VMDIR/modules.sh" | sha256sum | cut -c1-16)   # the contents (not the paths: the cache is shared by checkouts)
if [ "$(cat "$K/done" 2>/dev/null)" != "$VIMC_STAMP" ]; then
  rm -rf "$K" && mkdir -p "$K"
  grep -q '^CONFIG_IRQ_SIM=y' "$B/boot/config-$KVER" && export OOT_IRQ_SIM_BUILTIN=1
  oot_unpack_source "$ksrc_pkg" "$K/src" $OOT_GPIO_SIM_FILES $OOT_VIMC_FILES <"$B/usr/src/$ksrc_pkg.tar.xz"
  oot_build_gpio_sim "$K/src" "$KDIR" "$K" $KMAKE
  oot_build_vimc "$K/src" "$KDIR" "$VMDIR/vimc-inject.patch" "$K" aarch64-linux-gnu-strip $KMAKE
  aarch64-linux-gnu-strip --strip-debug "$K/gpio-sim.ko"
  [ -e "$K/irq_sim.ko" ] && aarch64-linux-gnu-strip --strip-debug "$K/irq_sim.ko"
  rm -rf "$K/src" "$K/gpio-sim" "$K/vimc"
  echo "$VIMC_STAMP" >"$K/done"
  stamp "gpio-sim and vimc built for $KVER"
fi

# --- the .deb -------------------------------------------------------------------------------------
DEB_DEPENDS=
if [ "$PREPARE" = 0 ]; then
  if [ -z "$DEB" ]; then
    # The checkout's own: `make deb ARCH=arm64` (an incremental build when nothing changed).
    DEB=$("$REPO/harness/arm64/build.sh" --deb 2>"$W/deb.log" | sed -n 's/^deb //p') || true
    [ -n "$DEB" ] || { tail -30 "$W/deb.log"; die "harness/arm64/build.sh --deb (make deb ARCH=arm64) failed"; }
  fi
  [ -f "$DEB" ] && [ "$(dpkg-deb -f "$DEB" Architecture)" = arm64 ] || die "no arm64 .deb at '$DEB'"
  # The package's Depends, names only: the guest's root must hold them (it has no network).
  DEB_DEPENDS=$(dpkg-deb -f "$DEB" Depends | tr ',' '\n' | sed 's/(.*//; s/|.*//; s/ //g' | grep . | sort -u | tr '\n' ' ')
  stamp "package $(basename "$DEB")"
fi

# --- the guest's root: an ext4 image, made once ---------------------------------------------------------
# The packages of a small systemd system, the tools the checks use (GNU time: the idle RSS; arecord:
# what the door said), espeak-ng and libevdev2 (the package recommends them: the door's phrases, a
# USB keypad), python3-evdev (a keypad made with uinput), Wi-Fi for setup by a code
# (network-manager and wpasupplicant in the door; hostapd, dnsmasq and iw for the site's access
# point in a namespace of its own), tzdata and systemd-timesyncd (the code's zone and NTP), and
# the kiosk's Depends.
GUEST_PACKAGES="systemd systemd-sysv udev apt dbus mosquitto mosquitto-clients gpiod v4l-utils kmod procps
  util-linux libcamera-ipa libcamera0.4 adduser time espeak-ng alsa-utils libevdev2 python3-evdev
  network-manager wpasupplicant hostapd dnsmasq iw iproute2 tzdata systemd-timesyncd"
# And the .deb's Depends as harness/vm-arm64/deb-depends lists them, so that --prepare (CI's prefetch)
# can make the root and its slow first boot before the .deb exists. A .deb that needs more makes
# the root anew (its key changes), and says which list to update.
LISTED=$(grep -v '^#' "$HERE/deb-depends" | tr '\n' ' ')
need=""
for p in $LISTED $DEB_DEPENDS; do case " $GUEST_PACKAGES $need " in *" $p "*) ;; *) need="$need $p" ;; esac; done
for p in $DEB_DEPENDS; do
  case " $LISTED " in *" $p "*) ;; *) echo "INFO vm-arm64: the .deb depends on $p, not in harness/vm-arm64/deb-depends: the guest's root is made anew (add it there)" ;; esac
done
GKEY=$(echo "format=1 $GUEST_PACKAGES $(echo $need | tr ' ' '\n' | sort | tr '\n' ' ') $KVER $VIMC_STAMP $(sha256sum "$HERE/stage2.sh" | cut -c1-16)" | sha256sum | cut -c1-12)
IMG=$CACHE/root-$GKEY.img
if [ ! -e "$IMG.done" ]; then
  rm -f "$CACHE"/root-*.img "$CACHE"/root-*.img.done
  R=$CACHE/root-$GKEY
  rm -rf "$CACHE"/root-*/ "$R"
  stamp "unpacking the guest's root (trixie arm64: essential,$GUEST_PACKAGES$need)"
  mmdebstrap --variant=extract --architectures=arm64 --include='?essential' \
    --include="$(echo $GUEST_PACKAGES $need | tr ' ' ,)" --skip=cleanup/apt/cache \
    trixie "$R" "$MIRROR" >"$CACHE/root-mmdebstrap.log" 2>&1 \
    || { tail -20 "$CACHE/root-mmdebstrap.log"; die "mmdebstrap (guest root) failed"; }
  ls "$R"/var/cache/apt/archives/*.deb >/dev/null || die "mmdebstrap kept no .deb files in the root"
  merged_usr "$R"
  mkdir -p "$R/var/lib/dpkg/info" "$R/var/lib/dpkg/updates" "$R/var/lib/dpkg/triggers"
  touch "$R/var/lib/dpkg/status" "$R/var/lib/dpkg/available"
  # The kernel's modules, with the two built out of tree.
  mkdir -p "$R/usr/lib/modules"
  cp -a "$MODROOT/$KVER" "$R/usr/lib/modules/"
  mkdir -p "$R/usr/lib/modules/$KVER/updates"
  cp "$K"/*.ko "$R/usr/lib/modules/$KVER/updates/"
  depmod -b "$R/usr" "$KVER" 2>/dev/null || depmod -b "$R" "$KVER"
  # What a first boot needs to be quiet and quick, and the unit that runs the checks.
  cp "$HERE/stage2.sh" "$R/stage2.sh" && chmod 755 "$R/stage2.sh"
  rm -f "$R/etc/resolv.conf"
  mke2fs -q -t ext4 -L kiosk-root -d "$R" "$IMG" 6G || die "mke2fs of the guest's root failed"
  rm -rf "$R"
  stamp "root image made ($(du -m "$IMG" | cut -f1) MB); first boot: dpkg installs it"
  initrd=1
fi

# --- the initramfs: busybox and the modules that mount the disk ------------------------------------------
INITRD=$CACHE/initrd-$KVER.cpio
if [ ! -e "$INITRD" ]; then
  I=$W/initrd
  mkdir -p "$I"/{bin,dev,proc,sys,newroot,modules}
  cp "$B/usr/bin/busybox" "$I/bin/busybox" 2>/dev/null || cp "$B/bin/busybox" "$I/bin/busybox"
  n=0
  for m in virtio_pci virtio_mmio virtio_blk ext4; do
    modprobe -d "$B" -S "$KVER" --show-depends "$m" 2>/dev/null | awk '$1 == "insmod" { print $2 }'
  done | awk '!seen[$0]++' | while read -r ko; do
    n=$((n + 1)); cp "$ko" "$I/modules/$(printf %02d $n)-$(basename "$ko")"
  done
  cat >"$I/init" <<'EOF'
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc; mount -t sysfs sysfs /sys; mount -t devtmpfs devtmpfs /dev
for ko in /modules/*; do case $ko in *.xz) xz -dc "$ko" >/tmp.ko && insmod /tmp.ko; rm -f /tmp.ko ;; *) insmod "$ko" ;; esac; done
n=100; while [ ! -b /dev/vda ] && [ $n -gt 0 ]; do sleep 0.1; n=$((n - 1)); done
mount -t ext4 -o rw /dev/vda /newroot || { echo "initrd: cannot mount /dev/vda"; poweroff -f; }
init=/sbin/init
for a in $(cat /proc/cmdline); do case $a in vm.init=*) init=${a#vm.init=} ;; esac; done
umount /proc /sys; mount --move /dev /newroot/dev
exec switch_root /newroot "$init"
EOF
  chmod 755 "$I/init"
  (cd "$I" && find . | cpio -o -H newc --quiet) >"$INITRD.tmp" && mv "$INITRD.tmp" "$INITRD"
  stamp "initramfs made"
fi

# qemu_boot LOG DRIVE...: the emulated Pi (Cortex-A72, 2 cores, 2 GB) in the background, its
# console to LOG; each DRIVE ("file=...,format=...") a virtio disk, /dev/vda first.
# NO_REBOOT: -no-reboot (a reboot ends QEMU), or empty for the test run, whose guest reboots
# (the setup group's stages, harness/vm-arm64/setup.sh).
NO_REBOOT=-no-reboot
qemu_boot() {
  local log=$1; shift
  local drives=() d
  for d in "$@"; do drives+=(-drive "if=none,id=d${#drives[@]},$d" -device "virtio-blk-pci,drive=d${#drives[@]}"); done
  qemu-system-aarch64 -M virt -cpu cortex-a72 -smp "$SMP" -m 2048 -accel tcg,thread=multi \
    -kernel "$VMLINUZ" -initrd "$INITRD" \
    -append "console=ttyAMA0 rdinit=/init quiet loglevel=3 systemd.show_status=error $BOOT_APPEND" \
    "${drives[@]}" -nic none -display none -serial "file:$log" -monitor none $NO_REBOOT -nodefaults &
  QPID=$!
}
# qemu_wait SECONDS: wait for QEMU to end (killed after SECONDS); QSTATUS, 124 when timed out.
qemu_wait() {
  local n=$(($1 * 2))
  while kill -0 "$QPID" 2>/dev/null && [ $n -gt 0 ]; do sleep 0.5; n=$((n - 1)); done
  if kill -0 "$QPID" 2>/dev/null; then kill "$QPID"; wait "$QPID" 2>/dev/null; QSTATUS=124
  else wait "$QPID"; QSTATUS=$?; fi
  QPID=
}

# --- first boot: dpkg installs the unpacked packages (stage2.sh), then the image is kept -----------------
if [ ! -e "$IMG.done" ]; then
  BOOT_APPEND="vm.init=/stage2.sh"
  qemu_boot "$CACHE/first-boot.log" "file=$IMG,format=raw"
  qemu_wait "$FIRST_S"
  grep -qa $'^STAGE2-DONE\r\\{0,1\\}$' "$CACHE/first-boot.log" || { tail -30 "$CACHE/first-boot.log"; die "the first boot did not finish (QEMU status $QSTATUS; $CACHE/first-boot.log)"; }
  touch "$IMG.done"
  stamp "first boot done: $(grep -ao 'STAGE2-PACKAGES [0-9]* in [0-9.]* s' "$CACHE/first-boot.log")"
fi
if [ "$PREPARE" = 1 ]; then stamp "prepared: the kernel $KVER, its modules and the guest's root (cached in $CACHE)"; exit 0; fi

# --- the payload: the second disk -----------------------------------------------------------------
PL=$W/payload
mkdir -p "$PL/frames"
# The speech check's credentials (group 11): minted by the tests' independent issuer (cwt, from the
# peers' virtual environment), its public key the guest's trust directory; a valid one, an expired
# one and two codes that are no credential, each a frame.
mkdir -p "$PL/trust"
PEER=${KIOSK_PEERS_PYTHON:-$REPO/.cache/peers/bin/python}
[ -x "$PEER" ] || die "no peers' python ($PEER): make peers"
now=$(date +%s)
mint() {  # mint SUB NBF EXP: a KC1 credential of issuer-1
  printf '{"op": "sign", "lib": "cwt", "private": "%s", "alg": "ES256", "kid": "issuer-1", "claims": {"1": "acme", "2": "%s", "4": %d, "5": %d, "6": %d}}\n' \
    "$W/issuer.key" "$1" "$3" "$2" "$2" | "$PEER" "$REPO/Tests/Peers/credentials.py" | sed -n 's/.*"text": *"\([^"]*\)".*/\1/p'
}
printf '{"op": "keygen", "alg": "ES256", "private": "%s", "public": "%s"}\n' "$W/issuer.key" "$PL/trust/issuer-1.pem" \
  | "$PEER" "$REPO/Tests/Peers/credentials.py" >/dev/null || die "the issuer's key was not made"
VALID=$(mint alice $((now - 3600)) $((now + 7 * 86400))) EXPIRED=$(mint dave $((now - 7200)) $((now - 3600)))
VALID2=$(mint bob $((now - 3600)) $((now + 7 * 86400)))
[ -n "$VALID" ] && [ -n "$EXPIRED" ] && [ -n "$VALID2" ] || die "the speech check's credentials were not minted"
# The keypad group's (12, harness/vm-arm64/keypad.sh): alice and carol ask for a PIN, bob does not; the
# pins file written by the admin's tool (its PINs are keypad.sh's), the Wiegand keypad's program.
KEYPAD_ALICE=$(mint alice $((now - 3600)) $((now + 7 * 86400))) KEYPAD_BOB=$(mint bob $((now - 3600)) $((now + 7 * 86400)))
KEYPAD_CAROL=$(mint carol $((now - 3600)) $((now + 7 * 86400)))
[ -n "$KEYPAD_ALICE" ] && [ -n "$KEYPAD_BOB" ] && [ -n "$KEYPAD_CAROL" ] || die "the keypad group's credentials were not minted"
eval "$(grep '^KP_PIN=' "$HERE/keypad.sh")"   # KP_PIN (alice's), KP_CAROL, ...
echo "$KP_PIN" | "$PEER" "$REPO/deploy/examples/issue-credential" pin set --subject alice --file "$PL/pins" 2>/dev/null \
  && echo "$KP_CAROL" | "$PEER" "$REPO/deploy/examples/issue-credential" pin set --subject carol --file "$PL/pins" 2>/dev/null \
  || die "issue-credential pin set failed"
clang --target=aarch64-linux-gnu --sysroot="$B" -fuse-ld=lld -static -O2 -o "$PL/keypad-wiegand" "$HERE/keypad.c" || die "keypad.c did not cross-build"
cp "$HERE/keypad.sh" "$HERE/keypad.py" "$PL/"
python3 "$VMDIR/frames.py" "$PL/frames" "speech-valid=$VALID" "speech-expired=$EXPIRED" "speech-valid2=$VALID2" \
  "speech-plain=KIOSK-VM-HELLO" "speech-plain2=KIOSK-VM-AGAIN" \
  "pin-alice=$KEYPAD_ALICE" "pin-bob=$KEYPAD_BOB" "pin-carol=$KEYPAD_CAROL" >"$PL/frames/frames.list"   # the amd64 tier's frames, and these
rm -f "$PL"/frames/*.pgm "$PL"/frames/*.ppm
cp "$DEB" "$HERE/guest.sh" "$PL/"
# The verdict program of the strike check: grants every code.
printf '#!/bin/sh\ncat >/dev/null\nexit 0\n' >"$PL/allow"
# The libcamera plugin, cross-built from the package's own copy of its source (what a user builds
# on the Pi with `make -C /usr/share/kiosk/libcamera-plugin`), against trixie's arm64 libcamera.
dpkg-deb -x "$DEB" "$W/deb"
LCSRC=$W/deb/usr/share/kiosk/libcamera-plugin
[ -f "$LCSRC/Makefile" ] || die "the package has no /usr/share/kiosk/libcamera-plugin"
mkdir -p "$W/lc"
(cd "$W/lc" && PKG_CONFIG_SYSROOT_DIR=$B PKG_CONFIG_LIBDIR=$B/usr/lib/aarch64-linux-gnu/pkgconfig:$B/usr/share/pkgconfig \
  make -f "$LCSRC/Makefile" kiosk-libcamera.so CXX="clang++ --target=aarch64-linux-gnu --sysroot=$B -fuse-ld=lld") \
  >"$W/lc/build.log" 2>&1 || { cat "$W/lc/build.log"; die "the libcamera plugin did not cross-build"; }
[ "$(LC_ALL=C readelf -h "$W/lc/kiosk-libcamera.so" | sed -n 's/^ *Machine: *//p')" = AArch64 ] || die "the plugin is not an arm64 library"
cp "$W/lc/kiosk-libcamera.so" "$PL/"
. "$HERE/setup-payload.sh"   # group 13: setup by a signed code
mke2fs -q -t ext4 -L kiosk-payload -d "$PL" "$W/payload.img" 256M || die "mke2fs of the payload failed"
stamp "payload: $(basename "$DEB"), $(ls "$PL/frames" | wc -l) frames, the plugin (arm64, $(du -k "$PL/kiosk-libcamera.so" | cut -f1) kB)"

# --- the run: a copy-on-write overlay of the root image, so every run starts from the same disk -------
qemu-img create -q -f qcow2 -b "$IMG" -F raw "$W/root.qcow2"
LOG=${RUN_LOG:-$CACHE/last-run.log}
: >"$LOG"
console() { tr -d '\r' <"$LOG" | sed 's/\x1b[^a-zA-Z]*[a-zA-Z]//g'; }   # the console, its escape sequences out
BOOT_APPEND=$APPEND NO_REBOOT=
# A third disk the guest writes what the door said to (group 11): a header line "SAID BYTES", then
# at 512 the samples (16 kHz mono S16_LE, recorded at the loopback's other end).
truncate -s 16M "$W/said.img"
qemu_boot "$LOG" "file=$W/root.qcow2,format=qcow2" "file=$W/payload.img,format=raw" "file=$W/said.img,format=raw"
t0=$SECONDS booted=0 QSTATUS=
while kill -0 "$QPID" 2>/dev/null; do
  # (grep -c and tail read the console to its end: a grep -q that stops early leaves tr writing into a
  # closed pipe, and pipefail takes its SIGPIPE for a failure.)
  if [ $booted = 0 ] && console | grep -c '^INFO guest up' >/dev/null; then booted=1; stamp "booted: $(console | grep '^INFO guest up' | tail -1 | cut -c6-)"; fi
  [ $booted = 0 ] && [ $((SECONDS - t0)) -ge "$BOOT_S" ] && break
  [ $((SECONDS - t0)) -ge "$TIMEOUT_S" ] && break
  sleep 1
done
if kill -0 "$QPID" 2>/dev/null; then kill "$QPID"; wait "$QPID" 2>/dev/null; QSTATUS=124; else wait "$QPID"; QSTATUS=$?; fi
QPID=
console | grep -E '^(PASS|FAIL|INFO) ' || true
stamp "VM finished (QEMU status $QSTATUS; console in $LOG)"
passed=$(console | grep -c '^PASS ' || true)
failed=$(console | grep -c '^FAIL ' || true)
# What the door said, heard on the host by Debian's pocketsphinx (Tests/Peers/speech_recognizer.py),
# constrained to the grammar of every default phrase: the three verdicts' phrases, in order.
said=$(head -c 64 "$W/said.img" | tr -d '\0' | sed -n 's/^SAID \([0-9]*\)$/\1/p')
if console | grep -c '^INFO speech recorded' >/dev/null; then
  if [ -n "$said" ] && [ "$said" -gt 16000 ]; then
    dd if="$W/said.img" of="$W/said.raw" bs=512 skip=1 count=$(( (said + 511) / 512 )) status=none && truncate -s "$said" "$W/said.raw"
    PHRASES=("Welcome." "This pass is out of date." "This code is not valid here." "This code is old. Please show the live pass."
             "This pass was already used." "Not at this time." "This pass does not open this door." "The building is locked down."
             "This pass has been withdrawn." "The door cannot check passes now. Please call for help." "Please enter your pin."
             "Wrong pin." "No pin was entered." "Too many wrong pins. Please call for help." "Setup done." "Setup code refused.")
    heard=$(/usr/bin/python3 "$REPO/Tests/Peers/speech_recognizer.py" "$W/said.raw" "${PHRASES[@]}" 2>&1) || heard="the recogniser failed: $heard"
    order=$(python3 -c 'import json, sys; print(" ".join(str(i) for i in json.loads(sys.argv[1])["phrases"]))' "$heard" 2>/dev/null || echo "?")
    if [ "$order" = "0 1 2" ]; then
      echo "PASS speech: what the installed kiosk said into snd-aloop, recorded by arecord at its other end ($((said / 32000)) s), heard by pocketsphinx on the host as Welcome., This pass is out of date., This code is not valid here."
      passed=$((passed + 1))
    else
      echo "FAIL speech: pocketsphinx heard $heard (want the phrases 0 1 2: Welcome, out of date, not valid here)"; failed=$((failed + 1))
    fi
  else
    echo "FAIL speech: the guest wrote no recording (${said:-no header})"; failed=$((failed + 1))
  fi
fi
# The setup group's secrets (this run's Wi-Fi key and broker passwords) never on the console.
if [ -s "$PL/setup/psk" ] && console | grep -qF -e "$(cat "$PL/setup/psk")" -e "$(cat "$PL/setup/mqtt-password")" -e "$(cat "$PL/setup/admin-password")"; then
  echo "FAIL setup: a secret of the setup codes is on the guest's console"; failed=$((failed + 1))
fi
result=$(console | grep -E '^RESULT [0-9]+ passed, [0-9]+ failed$' | tail -1 || true)
if [ $booted = 0 ]; then
  echo "FAIL vm-arm64: the guest did not boot within ${BOOT_S}s (no 'guest up' line; see $LOG)"; tail -20 "$LOG"; failed=$((failed + 1))
elif [ -z "$result" ]; then
  echo "FAIL vm-arm64: the checks did not finish within ${TIMEOUT_S}s (QEMU status $QSTATUS; see $LOG)"; tail -20 "$LOG"; failed=$((failed + 1))
fi
echo "$passed passed, $failed failed"
[ "$failed" = 0 ] && [ "$passed" -gt 0 ]
