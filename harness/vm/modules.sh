# SPDX-License-Identifier: Apache-2.0
# The out-of-tree kernel modules of the VM tiers (sourced by harness/vm/run.sh, amd64, and
# harness/vm-arm64/run.sh, arm64): Debian builds neither CONFIG_GPIO_SIM nor CONFIG_VIDEO_VIMC, so
# both are compiled from the few files of Debian's own linux-source they need. The caller defines
# die() and stamp(), and passes the kernel build folder (linux-headers-*), the unpacked sources, and
# make's extra arguments (ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu- for a cross build).

# The linux-source files each module needs (paths inside the source tree).
OOT_GPIO_SIM_FILES="drivers/gpio/gpio-sim.c drivers/gpio/gpiolib.h kernel/irq/irq_sim.c"
OOT_VIMC_FILES="drivers/media/test-drivers/vimc"
OOT_UVC_SRC="f_uvc.c f_uvc.h u_uvc.h uvc.h uvc_configfs.c uvc_configfs.h uvc_queue.c uvc_queue.h uvc_v4l2.c uvc_v4l2.h uvc_video.c uvc_video.h"
OOT_UVC_FILES=$(for f in $OOT_UVC_SRC; do printf 'drivers/usb/gadget/function/%s ' "$f"; done)

# oot_unpack_source KSRC_PKG DEST FILE...: the tar.xz of linux-source (on stdin) unpacked into
# DEST, only FILE... (as listed above).
oot_unpack_source() {
  local pkg=$1 dest=$2; shift 2
  rm -rf "$dest" && mkdir -p "$dest"
  tar -xJ -C "$dest" --strip-components=1 $(for f in "$@"; do echo "$pkg/$f"; done)
}

# oot_build_gpio_sim KS KDIR OUTDIR [MAKEARGS...]: gpio-sim.ko and irq_sim.ko (the interrupt
# simulator it needs, a module of its own here) into OUTDIR; the build in OUTDIR/gpio-sim.
# With OOT_IRQ_SIM_BUILTIN=1 (a kernel with CONFIG_IRQ_SIM=y) only gpio-sim.ko.
oot_build_gpio_sim() {
  local ks=$1 kdir=$2 out=$3; shift 3
  local src=$out/gpio-sim
  rm -rf "$src" && mkdir -p "$src"
  cp "$ks"/drivers/gpio/gpio-sim.c "$ks"/drivers/gpio/gpiolib.h "$src/"
  if [ "${OOT_IRQ_SIM_BUILTIN:-0}" = 1 ]; then
    echo 'obj-m := gpio-sim.o' >"$src/Kbuild"
  else
    cp "$ks/kernel/irq/irq_sim.c" "$src/"
    # irq_to_desc() is not exported to modules; generic_handle_irq() does the same here.
    sed -i 's/handle_simple_irq(irq_to_desc(irqnum))/generic_handle_irq(irqnum)/' "$src/irq_sim.c"
    grep -q 'generic_handle_irq(irqnum)' "$src/irq_sim.c" || die "irq_sim.c: the irq_to_desc patch did not apply"
    printf '\n#include <linux/module.h>\nMODULE_LICENSE("GPL");\n' >>"$src/irq_sim.c"
    echo 'obj-m := gpio-sim.o irq_sim.o' >"$src/Kbuild"
  fi
  make -s -C "$kdir" M="$src" "$@" modules >"$src/build.log" 2>&1 || { cat "$src/build.log"; die "gpio-sim did not build"; }
  cp "$src/gpio-sim.ko" "$out/"
  [ -e "$src/irq_sim.ko" ] && cp "$src/irq_sim.ko" "$out/"
  return 0
}

# oot_build_vimc KS KDIR PATCH OUTDIR STRIP [MAKEARGS...]: vimc.ko with the frame-injection patch
# (harness/vm/vimc-inject.patch) into OUTDIR, debug info stripped with STRIP (strip, or
# aarch64-linux-gnu-strip); the build in OUTDIR/vimc.
oot_build_vimc() {
  local ks=$1 kdir=$2 patch=$3 out=$4 strip=$5; shift 5
  local src=$out/vimc
  rm -rf "$src" && cp -r "$ks/drivers/media/test-drivers/vimc" "$src"
  patch -s -d "$src" -p1 <"$patch" || die "vimc-inject.patch did not apply"
  sed 's/\$(CONFIG_VIDEO_VIMC)/m/' "$src/Makefile" >"$src/Kbuild"
  make -s -C "$kdir" M="$src" "$@" modules >"$src/build.log" 2>&1 || { cat "$src/build.log"; die "vimc did not build"; }
  "$strip" --strip-debug -o "$out/vimc.ko" "$src/vimc.ko"
}

# oot_build_uvc KS KDIR PATCH OUTDIR STRIP [MAKEARGS...]: usb_f_uvc.ko, the UVC gadget function,
# with harness/vm/uvc-gadget.patch (Debian builds it, but 6.1's cannot be the webcam the uvc group
# needs: its bmControls are read-only in configfs, fixed at one camera terminal and one processing
# unit control, and it streams only isochronous, which dummy_hcd fails) into OUTDIR; the build in
# OUTDIR/uvc.
oot_build_uvc() {
  local ks=$1 kdir=$2 patch=$3 out=$4 strip=$5; shift 5
  local src=$out/uvc f
  rm -rf "$src" && mkdir -p "$src"
  for f in $OOT_UVC_SRC; do cp "$ks/drivers/usb/gadget/function/$f" "$src/"; done
  patch -s -d "$src" -p1 <"$patch" || die "uvc-gadget.patch did not apply"
  printf 'obj-m := usb_f_uvc.o\nusb_f_uvc-y := f_uvc.o uvc_queue.o uvc_v4l2.o uvc_video.o uvc_configfs.o\n' >"$src/Kbuild"
  make -s -C "$kdir" M="$src" "$@" modules >"$src/build.log" 2>&1 || { cat "$src/build.log"; die "usb_f_uvc did not build"; }
  "$strip" --strip-debug -o "$out/usb_f_uvc.ko" "$src/usb_f_uvc.ko"
}
