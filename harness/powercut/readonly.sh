#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A read-only card, tested both ways (issue 45): Raspberry Pi OS's overlay root, with and without a
# writable partition for /var/lib/kiosk, in QEMU VMs booted from Debian's kernel (the power-cut
# tier's; harness/powercut/run.sh runs this after its own VM, or alone with --readonly).
#
#   harness/powercut/readonly.sh CACHE KROOT KVER KIOSK PEERS_PYTHON WORKDIR
#
# Two virtual disks: the card's root (ext4, label rootfs) with the kiosk staged by
# deploy/install.sh and the settings a door sets in /etc/default/kiosk, and a small state partition
# (mkfs.ext4 -L kiosk-state, as docs/installing.md says). Each boot does what the Pi's initramfs
# does: the root mounted read-only, then Debian's own overlayroot script (package overlayroot, what
# `raspi-config` turns on with `overlayroot=tmpfs` in cmdline.txt) makes / an overlay whose upper
# layer is a tmpfs and rewrites /etc/fstab, then the fstab's mounts (busybox mount -a in place of
# systemd's), then the installed kiosk as its unit starts it. A power cut is `echo b >
# /proc/sysrq-trigger` while the kiosk runs (no sync, no stop); the next boot is the same disks.
# The boots (see readonly-guest.sh for each one's checks):
#   1 overlayroot=tmpfs:recurse=0, no partition: state_volatile, a one-time credential denied
#     `state volatile`, doctor FAIL; KIOSK_VOLATILE_STATE=accept grants credential 2; power cut
#   2 the same: credential 2 is granted again (the survival check, failing as it must here)
#   3 raspi-config's overlay as bullseye made it (boot=overlay, its own initramfs script: the tmpfs
#     never moved into the new root, so the kiosk cannot see the upper layer): state_volatile,
#     credential 3 denied, doctor FAIL
#   4 docs/installing.md's fstab line added (the admin, before the overlay), overlayroot=tmpfs:recurse=0:
#     /var/lib/kiosk is the partition, rw; doctor PASS, no state_volatile; credential 4 granted; power cut
#   5 the same: credential 4 is refused `used` (it survived the cut)
#   6 overlayroot=tmpfs (raspi-config's value as it writes it, recurse=1): overlayroot puts the
#     partition under an overlay in RAM too; the kiosk must see it: state_volatile, credential 5
#     denied, doctor FAIL
# Prints PASS/FAIL/INFO lines (the consoles in CACHE/last-readonly.log); exit 0 when nothing failed.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
. "$REPO/harness/vm/initramfs.sh"
[ $# = 6 ] || { echo "usage: $0 CACHE KROOT KVER KIOSK PEERS_PYTHON WORKDIR" >&2; exit 64; }
CACHE=$1 KROOT=$2 KVER=$3 KIOSK_BIN=$4 PEERS_PY=$5 W=$6
MODDIR=$KROOT/lib/modules/$KVER
VMLINUZ=$KROOT/boot/vmlinuz-$KVER
for f in "$VMLINUZ" "$MODDIR/modules.dep" "$KIOSK_BIN"; do [ -e "$f" ] || { echo "FAIL readonly: no $f"; exit 1; }; done
LOG=$CACHE/last-readonly.log
: >"$LOG"
die() { echo "FAIL readonly: $*"; exit 1; }

# --- Debian's overlayroot (the script raspi-config's overlay runs) and initramfs-tools' functions ---
mkdir -p "$CACHE/debs" "$W/debs"
for pkg in overlayroot initramfs-tools-core; do
  ver=$(apt-cache policy "$pkg" | awk '$1 == "Candidate:" { print $2 }')
  [ -n "$ver" ] && [ "$ver" != "(none)" ] || die "apt knows no $pkg"
  deb=$CACHE/debs/${pkg}_${ver//:/%3a}_all.deb
  [ -e "$deb" ] || (cd "$CACHE/debs" && apt-get -o APT::Sandbox::User=root download -q "$pkg=$ver" >/dev/null) || die "apt-get download $pkg failed"
  dpkg-deb -x "$deb" "$W/debs"
  echo "INFO readonly: Debian's $pkg $ver"
done

# --- the credentials: minted by the project's example issuer (as harness/powercut/run.sh does) ---
"$PEERS_PY" "$HERE/mint.py" "$W/cred" 5 || die "mint.py failed"
rm -f "$W/cred/issuer.key"

# --- the card's root: the kiosk as deploy/install.sh installs it, its libraries, busybox ---------
R=$W/rootfs
mkdir -p "$R"/{bin,etc/kiosk,proc,sys,dev,run,tmp,media,var/lib/kiosk}
DESTDIR=$R "$REPO/deploy/install.sh" --binary "$KIOSK_BIN" >"$W/install.log" 2>&1 || { cat "$W/install.log"; die "install.sh failed"; }
cp /bin/busybox "$R/bin/busybox"
for a in $(/bin/busybox --list); do [ -e "$R/bin/$a" ] || ln -s busybox "$R/bin/$a"; done
crypto=$(host_library libcrypto.so.3)
[ -n "$crypto" ] || die "no libcrypto.so.3 (libssl3)"
for f in $crypto $(ldd "$KIOSK_BIN" "$crypto" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// && $2 ~ /^\(0x/ { print $1 }' | sort -u); do
  [ -e "$R$f" ] || { mkdir -p "$R$(dirname "$f")" && cp -L "$f" "$R$f"; }
done
cp -r "$W/cred/trust" "$R/etc/kiosk/trust"
# The door's settings, as its admin puts them in /etc/default/kiosk (the replay camera stands in
# for the camera: /run is the unit's tmpfs).
cat >>"$R/etc/default/kiosk" <<'EOF'
KIOSK_VERDICT=credentials
KIOSK_CAMERA=replay:/run/frames
KIOSK_REQUIRE_SYNCED_CLOCK=0
EOF
# Raspberry Pi OS's fstab names the root by PARTUUID; this disk has no partition table: its label.
printf 'proc            /proc           proc    defaults          0       0\nLABEL=rootfs    /               ext4    defaults,noatime  0       1\n' >"$R/etc/fstab"
cp "$W/debs/etc/overlayroot.conf" "$R/etc/"   # the package's own (overlayroot=""): the command line decides
truncate -s 160M "$W/root.img" && truncate -s 16M "$W/state.img"
mke2fs -q -t ext4 -L rootfs -O ^huge_file,^64bit -d "$R" "$W/root.img" || die "mke2fs of the root failed"
# The state partition: docs/installing.md's mkfs line and fstab line, taken from it.
mke2fs -q -t ext4 -L kiosk-state "$W/state.img" || die "mke2fs of the state partition failed"
fstab_line=$(grep -E '^ *LABEL=kiosk-state +/var/lib/kiosk ' "$REPO/docs/installing.md" | head -1 | sed 's/^ *//')
[ -n "$fstab_line" ] || die "docs/installing.md has no fstab line for LABEL=kiosk-state /var/lib/kiosk"

# --- the initramfs: busybox, the modules, overlayroot and the guest's script ----------------------
I=$W/initramfs
mkdir -p "$I"/{bin,sbin,usr/bin,usr/sbin,etc,proc,sys,dev,tmp,run,harness,powercut,scripts/init-bottom,conf/conf.d,lib/modules/"$KVER"/deps}
cp /bin/busybox "$I/bin/busybox" && ln -s busybox "$I/bin/sh"
gcc -O2 -static -o "$I/bin/vmtool" "$REPO/harness/vm/vmtool.c"
cp "$W/debs/usr/share/initramfs-tools/scripts/functions" "$I/scripts/"
cp "$W/debs/usr/share/initramfs-tools/scripts/init-bottom/overlayroot" "$I/scripts/init-bottom/"
initramfs_modules "$KROOT" "$KVER" "$I" virtio_pci virtio_blk ext4 overlay || die "the modules"
cp "$REPO/harness/vm/init.sh" "$I/init" && chmod +x "$I/init"
cp "$REPO/harness/vm/guest-tests.sh" "$I/harness/"
cp "$HERE/readonly-guest.sh" "$I/powercut/"
cp -r "$W/cred/tokens" "$W/cred/tokens.list" "$W/cred/blank.pgm" "$I/powercut/"
echo "$fstab_line" >"$I/powercut/fstab-line"
echo "$KVER" >"$I/harness/kernel"
initramfs_pack "$I" "$W/readonly.cpio"

# --- the boots ---------------------------------------------------------------------------------------
# boot N END WORDS: boot N of readonly-guest.sh with WORDS on the kernel command line (the Pi's
# cmdline.txt: overlayroot=...); END: cut (it must end by the power cut) or end (by its verdict).
FAILED=0
boot() {
  local t0 status
  t0=$(date +%s)
  vm_boot "$W/boot.log" "PASS|FAIL|INFO" 300 768 "$W/readonly.cpio" "$3 READONLY_BOOT=$1" \
    -drive "file=$W/root.img,if=virtio,format=raw" -drive "file=$W/state.img,if=virtio,format=raw"
  status=$VM_STATUS
  { echo "=== boot $1 ($3): QEMU status $status"; cat "$W/boot.log"; } >>"$LOG"
  # isa-debug-exit: 1 = the guest's verdict pass, 3 = fail; 0 = the VM rebooted (the power cut).
  case $2:$status in
    cut:0) grep -q '^CUT ' "$W/boot.log" && echo "INFO readonly: boot $1 ended by the power cut ($(($(date +%s) - t0)) s)" ||
             { echo "FAIL readonly: boot $1 rebooted without its power cut (see $LOG)"; FAILED=$((FAILED + 1)); } ;;
    end:1) echo "INFO readonly: boot $1 done ($(($(date +%s) - t0)) s)" ;;
    *:3) [ "$(grep -c '^FAIL ' "$W/boot.log")" -gt 0 ] || { echo "FAIL readonly: boot $1 failed without a FAIL line (see $LOG)"; FAILED=$((FAILED + 1)); } ;;
    *:124) echo "FAIL readonly: boot $1 timed out (see $LOG)"; FAILED=$((FAILED + 1)) ;;
    *) echo "FAIL readonly: boot $1 ended with QEMU status $status, want $2 (see $LOG)"; tail -15 "$W/boot.log"; FAILED=$((FAILED + 1)) ;;
  esac
}
boot 1 cut overlayroot=tmpfs:recurse=0
boot 2 end overlayroot=tmpfs:recurse=0
boot 3 end boot=overlay
boot 4 cut overlayroot=tmpfs:recurse=0
boot 5 end overlayroot=tmpfs:recurse=0
boot 6 end overlayroot=tmpfs
[ "$FAILED" = 0 ] && ! grep -q '^FAIL ' "$LOG"
