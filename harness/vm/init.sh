#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# /init of the VM: mount what the tests need, run them, hand the verdict to QEMU.
export PATH=/bin:/sbin:/usr/bin:/usr/sbin HOME=/tmp
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /run
echo "INFO booted kernel $(uname -r) in $(cut -d' ' -f1 /proc/uptime) s"
sh /harness/guest-tests.sh
status=$?
sync
# isa-debug-exit: 0 -> QEMU exits 1 (pass), 1 -> QEMU exits 3 (fail)
if [ "$status" = 0 ]; then vmtool exit 0; else vmtool exit 1; fi
poweroff -f
