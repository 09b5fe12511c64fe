#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# A read-only card (issue 45), inside one of the VMs harness/powercut/readonly.sh boots: run by
# /init through harness/vm/guest-tests.sh when /powercut/readonly-guest.sh is in the initramfs.
# READONLY_BOOT=N on the kernel command line says which boot this is (readonly.sh lists them).
#
# What the Pi's initramfs does, done here: the card's root (/dev/vda) mounted read-only on /root,
# then Debian's overlayroot script (init-bottom/overlayroot, with initramfs-tools' functions): /
# becomes an overlay whose upper layer is the tmpfs /media/root-rw, and /etc/fstab is rewritten.
# Then what systemd would do: /proc, /sys, /dev, /run in the new root and the fstab's mounts
# (busybox mount -a). The kiosk runs in that root (chroot) as its unit starts it: the installed
# ExecStart, /etc/default/kiosk, STATE_DIRECTORY=/var/lib/kiosk, RUNTIME_DIRECTORY=/run/kiosk.
# Prints PASS/FAIL/INFO lines; a boot that ends by a power cut prints "CUT" and reboots with
# sysrq (no sync, the kiosk still running); the others print "RESULT N passed, M failed".
KVER=$(cat /harness/kernel)
P=/powercut
PASSED=0 FAILED=0
pass() { echo "PASS $*"; PASSED=$((PASSED + 1)); }
fail() { echo "FAIL $*"; FAILED=$((FAILED + 1)); }
info() { echo "INFO $*"; }
show() { sed 's/^/INFO   | /' "$@"; }
result() { echo "RESULT $PASSED passed, $FAILED failed"; [ "$FAILED" = 0 ]; exit; }
BOOT=
for w in $(cat /proc/cmdline); do
  case $w in READONLY_BOOT=*) BOOT=${w#*=} ;; esac
done
B="readonly: boot $BOOT"

load() {
  for ko in $(cat /lib/modules/$KVER/deps/$1); do
    name=$(basename "$ko" .ko | tr - _)
    grep -q "^$name " /proc/modules && continue
    insmod "$ko" || return 1
  done
}
for m in virtio_pci virtio_blk ext4 overlay; do load $m || { fail "$B: cannot load $m"; result; }; done
n=0
while [ ! -b /dev/vdb ] && [ $n -lt 100 ]; do sleep 0.1; n=$((n + 1)); done
[ -b /dev/vda ] && [ -b /dev/vdb ] || { fail "$B: no /dev/vda and /dev/vdb"; result; }

# Boot 4: the admin's step before the overlay is turned on (docs/installing.md): the state
# partition's line in the card's /etc/fstab.
if [ "$BOOT" = 4 ]; then
  mkdir -p /card && mount -t ext4 /dev/vda /card && cat $P/fstab-line >>/card/etc/fstab && umount /card ||
    { fail "$B: could not add the fstab line"; result; }
  info "$B: added to the card's /etc/fstab: $(cat $P/fstab-line)"
fi

# ---- the Pi's initramfs: the root read-only, then overlayroot --------------------------------------
R=/root
mkdir -p $R
if [ "$BOOT" = 3 ]; then
  # raspi-config's overlay before overlayroot (bullseye: `boot=overlay`, its own initramfs script,
  # these lines): the tmpfs on the initramfs's /upper, never moved into the new root.
  mkdir /lower /upper && mount -t ext4 -r /dev/vda /lower && mount -t tmpfs tmpfs /upper &&
    mkdir /upper/data /upper/work && mount -t overlay -o lowerdir=/lower,upperdir=/upper/data,workdir=/upper/work overlay $R ||
    { fail "$B: cannot make bullseye's overlay root"; result; }
else
  mount -t ext4 -r /dev/vda $R || { fail "$B: cannot mount the root read-only"; result; }
  export quiet=y rootmnt=$R ROOT=/dev/vda
  if ! sh /scripts/init-bottom/overlayroot >/tmp/overlayroot.out 2>&1; then
    fail "$B: overlayroot failed"; show /tmp/overlayroot.out; result
  fi
fi
for d in proc sys dev run; do mkdir -p $R/$d; done
mount -t proc proc $R/proc && mount -t sysfs sysfs $R/sys && mount -t devtmpfs devtmpfs $R/dev &&
  mount -t tmpfs -o mode=0755 tmpfs $R/run || { fail "$B: cannot mount /proc, /sys, /dev, /run in the new root"; result; }
# systemd's part: the fstab's mounts (what overlayroot left or rewrote).
chroot $R /bin/mount -a 2>/tmp/mount-a.err || { fail "$B: mount -a in the new root: $(head -2 /tmp/mount-a.err | paste -sd' ' -)"; show $R/etc/fstab; result; }
# mounts: the new root's mounts of interest as its processes see them: POINT TYPE SOURCE OPTIONS.
mounts() {
  chroot $R /bin/cat /proc/self/mountinfo |
    awk '$5 == "/" || $5 == "/var/lib/kiosk" || $5 ~ /^\/media\/root-r/ { i = 7; while ($i != "-") i++; print $5, $(i + 1), $(i + 2), $(i + 3) }'
}

# ---- the kiosk, as its unit starts it --------------------------------------------------------------
UNIT=$R/etc/systemd/system/kiosk.service
EXEC=$(sed -n 's/^ExecStart=//p' $UNIT)
KBIN=${EXEC%% *}
[ -x "$R$KBIN" ] || { fail "$B: the unit's ExecStart ($EXEC) is not in the root"; result; }
KLOG=/tmp/kiosk.log
# kiosk VAR=VALUE... ARGS: the installed kiosk in the new root, the unit's environment
# (/etc/default/kiosk, $STATE_DIRECTORY, $RUNTIME_DIRECTORY) plus these; stderr to $KLOG.
kiosk() {
  mkdir -p $R/run/kiosk $R/var/lib/kiosk
  chroot $R /bin/env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/ \
    $(grep -E '^[A-Z_][A-Z0-9_]*=' $R/etc/default/kiosk) STATE_DIRECTORY=/var/lib/kiosk RUNTIME_DIRECTORY=/run/kiosk \
    "$@" 2>$KLOG
}
# frames NUM [fifo]: the replay camera's frames: a blank one, credential NUM, and, with fifo, one
# the kiosk waits on (it keeps running until the power cut).
frames() {
  rm -rf $R/run/frames && mkdir -p $R/run/frames
  cp $P/blank.pgm $R/run/frames/0000.pgm && cp $P/tokens/$1.pgm $R/run/frames/0001.pgm
  [ "${2:-}" = fifo ] && mkfifo $R/run/frames/0002.pgm
  CTI=$(awk -v n="$1" '$1 "" == n "" { print $2 }' $P/tokens.list)
}
# run_once NUM [VAR=VALUE...]: the kiosk shown credential NUM, to the end of its frames.
run_once() {
  num=$1; shift
  frames "$num"
  kiosk "$@" $EXEC
  st=$?
  [ $st = 0 ] || { fail "$B: the kiosk ended $st"; show $KLOG; return 1; }
}
# judged RESULT REASON: the credential $CTI was judged so (in $KLOG).
judged() { grep -qE "event=credential result=$1 reason=\"?$2\"? .*cti=$CTI( |\$)" $KLOG; }
said_volatile() { grep -q 'level=warning event=state_volatile folder=/var/lib/kiosk ' $KLOG; }
doctor() { kiosk "$@" $KBIN doctor >/tmp/doctor.out; grep '^[A-Z]* state: ' /tmp/doctor.out; }
# cut_after NUM [VAR=VALUE...]: the kiosk granted credential NUM and still running, the power cut.
cut_after() {
  num=$1; shift
  frames "$num" fifo
  kiosk "$@" $EXEC &
  k=0
  until judged granted valid || [ $k -ge 300 ]; do sleep 0.1; k=$((k + 1)); done
  if judged granted valid; then pass "$B: credential $num granted ($CTI), the kiosk still running"
  else fail "$B: credential $num not granted"; show $KLOG; fi
  echo "RESULT $PASSED passed, $FAILED failed"
  echo "CUT power cut now: echo b >/proc/sysrq-trigger (no sync, no stop)"
  sleep 0.3   # the console's last lines out of the UART
  echo b >/proc/sysrq-trigger
  sleep 10
  fail "$B: sysrq did not reboot"; result
}

info "$B: mounts: $(mounts | paste -sd';' -)"
case $BOOT in
1|2)
  # The overlay root as overlayroot makes it, no partition: /var/lib/kiosk is in RAM.
  if mounts | grep -q '^/ overlay overlayroot rw,.*upperdir=/media/root-rw/overlay' && mounts | grep -q '^/media/root-rw tmpfs tmpfs-root ' &&
     mounts | grep -q '^/media/root-ro ext4 /dev/vda ro'; then
    pass "$B: overlayroot made / an overlay over /dev/vda read-only, its upper layer on the tmpfs /media/root-rw"
  else fail "$B: not the overlay root overlayroot makes"; mounts | show; fi
  if [ "$BOOT" = 1 ]; then
    run_once 001
    if said_volatile && grep -q 'event=state_volatile .*why="/var/lib/kiosk is on an overlay (/) whose upper layer /media/root-rw/overlay is on tmpfs' $KLOG; then
      pass "$B: the kiosk says state_volatile: $(grep -o 'why="[^"]*"' $KLOG | head -1)"
    else fail "$B: no state_volatile naming the overlay's upper layer on tmpfs"; show $KLOG; fi
    if judged denied "state volatile"; then pass "$B: KIOSK_VOLATILE_STATE unset (refuse): one-time credential 001 denied \"state volatile\""
    else fail "$B: credential 001 not denied \"state volatile\""; show $KLOG; fi
    line=$(doctor)
    case $line in
      "FAIL state: /var/lib/kiosk is on an overlay (/) whose upper layer /media/root-rw/overlay is on tmpfs"*) pass "$B: kiosk doctor: ${line%%: a power cut*}" ;;
      *) fail "$B: kiosk doctor says \"$line\", want FAIL state"; show /tmp/doctor.out ;;
    esac
    cut_after 002 KIOSK_VOLATILE_STATE=accept
  fi
  # Boot 2: the survival check where it must fail: credential 002's use was in RAM.
  run_once 002 KIOSK_VOLATILE_STATE=accept
  if judged granted valid; then pass "$B: no partition: after the power cut credential 002 is granted again (its use was in RAM: the survival check fails here, as it must)"
  elif judged denied used; then fail "$B: no partition, yet credential 002 is refused used after the power cut: the state was not in RAM"
  else fail "$B: credential 002 neither granted nor used"; show $KLOG; fi
  ;;
3)
  # raspi-config's overlay as bullseye made it: the overlay's upper layer is not visible from the
  # new root (its tmpfs stayed on the initramfs's /upper).
  if mounts | grep -q '^/ overlay overlay rw,.*upperdir=/upper/data' && ! chroot $R /bin/test -e /upper/data; then
    pass "$B: bullseye's raspi-config overlay: / an overlay whose upper layer /upper/data (a tmpfs) is not visible from it"
  else fail "$B: not bullseye's overlay root"; mounts | show; fi
  run_once 003
  if said_volatile && grep -q 'why="/var/lib/kiosk is on an overlay (/) whose upper layer /upper/data is not visible' $KLOG; then
    pass "$B: the kiosk says state_volatile: $(grep -o 'why="[^"]*"' $KLOG | head -1)"
  else fail "$B: no state_volatile for an overlay root whose upper layer it cannot see"; show $KLOG; fi
  if judged denied "state volatile"; then pass "$B: one-time credential 003 denied \"state volatile\""
  else fail "$B: credential 003 not denied \"state volatile\""; show $KLOG; fi
  line=$(doctor)
  case $line in
    "FAIL state: "*) pass "$B: kiosk doctor: ${line%%: a power cut*}" ;;
    *) fail "$B: kiosk doctor says \"$line\", want FAIL state"; show /tmp/doctor.out ;;
  esac
  ;;
4|5)
  # docs/installing.md's setup: the partition in fstab, overlayroot=tmpfs:recurse=0.
  if mounts | grep -q '^/var/lib/kiosk ext4 /dev/vdb rw'; then pass "$B: /var/lib/kiosk is the partition /dev/vdb, ext4, mounted rw beside the overlay root"
  else fail "$B: /var/lib/kiosk is not the writable partition"; mounts | show; show $R/etc/fstab; fi
  if [ "$BOOT" = 4 ]; then
    line=$(doctor)
    case $line in
      "PASS state: /var/lib/kiosk survives a power cut"*) pass "$B: kiosk doctor: $line" ;;
      *) fail "$B: kiosk doctor says \"$line\", want PASS state"; show /tmp/doctor.out ;;
    esac
    cut_after 004
  fi
  run_once 004
  if said_volatile; then fail "$B: the kiosk says state_volatile where the partition should be"; show $KLOG; fi
  if judged denied used; then pass "$B: after the power cut credential 004 is refused \"used\": its grant survived on the partition"
  else fail "$B: credential 004 was granted before the power cut but is not refused used after it"; show $KLOG; fi
  ;;
6)
  # raspi-config's own value (overlayroot=tmpfs, recurse=1): overlayroot puts the partition's
  # fstab line under an overlay too, its upper layer in RAM.
  if mounts | grep -q '^/var/lib/kiosk overlay .*upperdir=/media/root-rw/overlay/var/lib/kiosk'; then
    pass "$B: overlayroot=tmpfs (recurse=1) puts the partition under an overlay on RAM: $(mounts | grep '^/var/lib/kiosk ' | cut -c1-60)..."
  else fail "$B: /var/lib/kiosk is not the overlay recurse=1 makes"; mounts | show; fi
  run_once 005
  if said_volatile && grep -q 'why="/var/lib/kiosk is on an overlay (/var/lib/kiosk) whose upper layer /media/root-rw/overlay/var/lib/kiosk is on tmpfs' $KLOG; then
    pass "$B: the kiosk sees it: state_volatile $(grep -o 'why="[^"]*"' $KLOG | head -1)"
  else fail "$B: no state_volatile for the partition overlaid in RAM"; show $KLOG; fi
  if judged denied "state volatile"; then pass "$B: one-time credential 005 denied \"state volatile\""
  else fail "$B: credential 005 not denied \"state volatile\""; show $KLOG; fi
  line=$(doctor)
  case $line in
    "FAIL state: "*) pass "$B: kiosk doctor: ${line%%: a power cut*}" ;;
    *) fail "$B: kiosk doctor says \"$line\", want FAIL state"; show /tmp/doctor.out ;;
  esac
  ;;
*) fail "readonly: no READONLY_BOOT=1-6 on the kernel command line" ;;
esac
result
