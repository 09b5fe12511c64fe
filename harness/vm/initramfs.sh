# SPDX-License-Identifier: Apache-2.0
# What the amd64 VM tiers share to make an initramfs and boot it (sourced by harness/vm/run.sh, its
# clock group harness/vm/clock.sh, and the power-cut tier's harness/powercut/run.sh and
# readonly.sh). The guest's /init is harness/vm/init.sh or a script of the tier's own.

# initramfs_libs DEST SYSROOT FILE...: every library FILE... needs, as SYSROOT resolves them (ldd;
# chrooted into SYSROOT when it is not ""), copied into DEST at the same path. A FILE under DEST is
# copied into SYSROOT's /tmp for its ldd there.
initramfs_libs() {
  local dest=$1 sysroot=$2 f n=0 args=(); shift 2
  if [ -n "$sysroot" ]; then
    for f in "$@"; do
      case $f in "$dest"/*) cp "$f" "$sysroot/tmp/initramfs-ldd-$n"; args+=("/tmp/initramfs-ldd-$n"); n=$((n + 1)) ;; *) args+=("$f") ;; esac
    done
  else args=("$@"); fi
  for f in $( { if [ -n "$sysroot" ]; then chroot "$sysroot" ldd "${args[@]}"; else ldd "${args[@]}"; fi; } 2>/dev/null |
              awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// && $2 ~ /^\(0x/ { print $1 }' | sort -u); do
    [ -e "$dest$f" ] || { mkdir -p "$dest$(dirname "$f")" && cp -L "$sysroot$f" "$dest$f"; } || return 1
  done
  [ -z "$sysroot" ] || rm -f "$sysroot"/tmp/initramfs-ldd-*
}

# host_library SONAME: the path of the host's amd64 SONAME, as ldconfig's cache has it; nothing when
# it has none. awk reads the cache to its end: an awk that exits at the first match leaves ldconfig
# writing into a closed pipe, and under pipefail its SIGPIPE (141) ends the caller (CI's power-cut
# tier ended so once its cache outgrew the pipe's 64 KB).
host_library() {
  ldconfig -p | awk -v so="$1" '$1 == so && /x86-64/ && !found { print $NF; found = 1 }'
}

# initramfs_modules KROOT KVER DEST MODULE...: each MODULE of the kernel unpacked at KROOT, with the
# modules it needs, copied into DEST/lib/modules/KVER, and its insmod order (dependencies first) in
# DEST/lib/modules/KVER/deps/MODULE for the guest's `load`. Fails, naming it, for a module the
# kernel has neither as a module nor built in.
initramfs_modules() {
  local kroot=$1 kver=$2 dest=$3 m deps ko rel; shift 3
  mkdir -p "$dest/lib/modules/$kver/deps"
  for m in "$@"; do
    deps=$(modprobe -d "$kroot" -S "$kver" --show-depends "$m" 2>/dev/null) || { echo "no module $m in $kver" >&2; return 1; }
    awk '$1 == "insmod" { print $2 }' <<< "$deps" | while read -r ko; do
      rel=${ko#"$kroot/lib/modules/$kver"/}
      mkdir -p "$dest/lib/modules/$kver/$(dirname "$rel")"
      cp "$ko" "$dest/lib/modules/$kver/$rel"
      echo "/lib/modules/$kver/$rel"
    done >"$dest/lib/modules/$kver/deps/$m"
  done
}

# initramfs_pack DIR OUT: DIR as a newc cpio archive at OUT.
initramfs_pack() { (cd "$1" && find . | cpio -o -H newc --quiet) >"$2"; }

# vm_boot LOG LINES TIMEOUT_S MEMORY_MB INITRD APPEND [QEMU-ARGS...]: Debian's kernel ($VMLINUZ) on
# QEMU's default x86-64 machine (pc; QEMU-ARGS may name another) with VM_SMP CPUs (2), the initramfs INITRD, APPEND after the console's words on the command
# line; the console (carriage returns dropped) in LOG, its lines that start with one of LINES (an
# extended regex's alternatives, e.g. "PASS|FAIL") shown as they come. QEMU's status in VM_STATUS:
# 1 the guest's verdict pass, 3 fail (isa-debug-exit), 0 a reboot, 124 the timeout.
vm_boot() {
  local log=$1 lines=$2 timeout_s=$3 mem=$4 initrd=$5 append=$6; shift 6
  set +e
  timeout "$timeout_s" qemu-system-x86_64 \
    -accel tcg,thread=multi -cpu max -smp "${VM_SMP:-2}" -m "$mem" \
    -kernel "$VMLINUZ" -initrd "$initrd" \
    -append "console=ttyS0 rdinit=/init quiet loglevel=3 panic=-1 $append" \
    -device isa-debug-exit,iobase=0xf4,iosize=0x04 \
    -display none -serial stdio -monitor none -no-reboot -nodefaults "$@" </dev/null 2>&1 |
    tr -d '\r' | tee "$log" | grep --line-buffered -E "^($lines) "
  VM_STATUS=${PIPESTATUS[0]}
  set -e
}
