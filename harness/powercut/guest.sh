#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Power cuts, tested as file systems are tested (issue 45), inside the VM that
# harness/powercut/run.sh boots (Debian's kernel, busybox, the release kiosk). Run by /init through
# harness/vm/guest-tests.sh when /powercut/guest.sh is in the initramfs.
#
# 1. The kiosk's state folder on ext4 (made as Raspberry Pi OS makes its root: pi-gen's
#    `mkfs.ext4 -L rootfs -O ^huge_file,^64bit`, 4 KiB blocks; mounted as its fstab does:
#    defaults,noatime, so data=ordered, commit=5) on device-mapper's log-writes target over a loop
#    device on a tmpfs file; the log on another one.
# 2. The workload: one release kiosk (KIOSK_VERDICT=credentials, a replay camera whose frames are
#    FIFOs fed one at a time) grants one-time credentials (minted by deploy/examples/issue-credential
#    on the host), takes a lockdown by `kiosk mode`, ends it, grants more, takes a lockdown again.
#    After each step is answered (the `credential` grant logged, `kiosk mode` answered) a MARK goes
#    into the log, so the log says what the kiosk had promised before each entry.
# 3. The check, at each point (a prefix of the log: after every FLUSH and FUA entry and every mark,
#    and two points between each two of them): the prefix replayed (replay-log) onto a copy of the
#    file system as it was made, mounted (the journal recovered), then the kiosk's own start
#    (`kiosk run` on that state, the credentials granted before the point shown to it again): it
#    must start (exit 0), read its store (no state_damaged at level error) and its mode file (no
#    state_damaged naming it), restart in the mode in force at the point or the one commanded next
#    (a lockdown it restores says so: `mode mode=lockdown reason=restart`), and refuse as `used`
#    every one-time credential whose grant was marked before the point (in a lockdown it refuses
#    them for that reason first: the mode file is then set aside and the kiosk started again);
#    then unmounted, `e2fsck -fn` must find the file system clean.
# 4. The self-test: the same log, replay and check around pc-writer, which writes the store in
#    the kiosk's format with no fsync at all (nosync: must be caught), or with the fsync before the
#    rename left out (nofsync, mounted noauto_da_alloc: must be caught; with the default
#    auto_da_alloc: how many points caught it is said), or durably as the kiosk does (good: the
#    control, must pass). Bounded: the kiosk's marks and a few points between, nosync at its marks.
#
# POWERCUT=bounded (CI: a sample of the points) or full on the kernel command line;
# POWERCUT_POINTS=N: at most N points a phase when bounded (the marks always). Prints
# PASS/FAIL/INFO lines, "powercut: N points, M failures" a phase, and "RESULT N passed, M failed";
# exit 0 when nothing failed.
KVER=$(cat /harness/kernel)
P=/powercut
PASSED=0 FAILED=0
pass() { echo "PASS $*"; PASSED=$((PASSED + 1)); }
fail() { echo "FAIL $*"; FAILED=$((FAILED + 1)); }
info() { echo "INFO $*"; }
show() { sed 's/^/INFO   | /' "$@"; }
MODE=bounded
POINTS_K=16 POINTS_B=1
for w in $(cat /proc/cmdline); do
  case $w in
    POWERCUT=*) MODE=${w#POWERCUT=} ;;
    POWERCUT_POINTS=*) POINTS_K=${w#*=} POINTS_B=${w#*=} ;;
    POWERCUT_EXPECT=*) EXPECT=${w#*=} ;;  # "broken": a kiosk built to skip its fsync must fail
    POWERCUT_VARIANTS=*) ONLY_VARIANTS=$(echo "${w#*=}" | tr , ' ') ;;  # the self-test's, "none" for none
  esac
done
export DM_DISABLE_UDEV=1
now_ms() { vmtool ms; }
T0=$(now_ms)
elapsed() { echo "$(( ($(now_ms) - T0) / 1000 )) s"; }

load() {
  for ko in $(cat /lib/modules/$KVER/deps/$1); do
    name=$(basename "$ko" .ko | tr - _)
    grep -q "^$name " /proc/modules && continue
    insmod "$ko" || return 1
  done
}

W=/pc                       # tmpfs: the images, the log, the frames
MNT=/state                  # the logged file system, during the workload
CHK=/chk                    # a point's copy, mounted
DATA_MB=16 LOG_MB=192
KENV="PATH=/bin:/usr/bin:/sbin:/usr/sbin HOME=/tmp KIOSK_VERDICT=credentials KIOSK_TRUST_DIR=$P/trust KIOSK_REQUIRE_SYNCED_CLOCK=0 RUNTIME_DIRECTORY=/tmp/pc-run"
[ "${EXPECT:-}" = broken ] && KENV="$KENV KIOSK_TEST_BROKEN_WRITES=1"  # the test build skips its syncs only when asked

# ---- the logged device --------------------------------------------------------------------------
# logged_up [MOUNT-OPTIONS]: a new file system on a new data image, its copy as made (base.img), the
# log-writes device over both, mounted on $MNT with the kiosk's folder made and on disk; a mark
# "setup".
logged_up() {
  kill "$KPID" 2>/dev/null; umount $MNT 2>/dev/null; /usr/sbin/dmsetup remove pc 2>/dev/null
  losetup -d "$DLOOP" 2>/dev/null; losetup -d "$LLOOP" 2>/dev/null
  rm -f $W/data.img $W/log.img $W/base.img
  truncate -s ${DATA_MB}M $W/data.img && truncate -s ${LOG_MB}M $W/log.img || return 1
  /usr/sbin/mke2fs -q -t ext4 -L rootfs -O ^huge_file,^64bit -b 4096 -E lazy_itable_init=0,lazy_journal_init=0 $W/data.img || return 1
  cp $W/data.img $W/base.img
  DLOOP=$(losetup -f) && losetup "$DLOOP" $W/data.img || return 1
  LLOOP=$(losetup -f) && losetup "$LLOOP" $W/log.img || return 1
  /usr/sbin/dmsetup create pc --table "0 $(blockdev --getsz "$DLOOP") log-writes $DLOOP $LLOOP" || return 1
  [ -b /dev/mapper/pc ] || /usr/sbin/dmsetup mknodes pc
  mount -t ext4 -o "noatime${1:+,$1}" /dev/mapper/pc $MNT || return 1
  mkdir -m 0700 $MNT/kiosk && sync || return 1
  : >$W/marks
  mark setup setup -
}
# mark NAME KIND VALUE: a MARK in the log now, and what it stands for in $W/marks.
mark() {
  /usr/sbin/dmsetup message pc 0 mark "$1" || { fail "powercut: /usr/sbin/dmsetup message mark $1"; return 1; }
  echo "$1 $2 $3" >>$W/marks
}
# logged_down: unmounted (its last writes logged), the target removed (it logs a last mark), the
# entries listed in $W/list and the marks resolved to entries in $W/events (INDEX KIND VALUE).
logged_down() {
  umount $MNT || { info "powercut: umount $MNT failed"; return 1; }
  /usr/sbin/dmsetup remove pc && losetup -d "$DLOOP" && losetup -d "$LLOOP" || return 1
  replay-log --log $W/log.img --list >$W/list || return 1
  awk 'NR == FNR { kind[$1] = $2; value[$1] = $3; next }
       $2 ~ /MARK/ && ($5 in kind) { print $1, kind[$5], value[$5] }' $W/marks $W/list >$W/events
  [ "$(wc -l <$W/events)" = "$(wc -l <$W/marks)" ] && return 0
  info "powercut: $(wc -l <$W/marks) marks made, $(wc -l <$W/events) found in the log of $(($(wc -l <$W/list) - 1)) entries: $(grep MARK $W/list | tail -3 | paste -sd, -); dmesg: $(dmesg | grep -i 'log-writes\|device-mapper' | tail -2 | paste -sd' ' -)"
  return 1
}

# ---- the points ---------------------------------------------------------------------------------
# points MAX: the prefixes to check, one entry count a line, from the setup mark on: after each
# FLUSH, FUA and MARK entry, and two points between each two of them that are further apart
# ($W/points.all); with MAX > 0 only every mark's and, up to MAX in all, others evenly spread.
points() {
  start=$(awk '$2 == "setup" { print $1 + 1 }' $W/events)
  awk -v s="$start" 'NR > 1 && $1 + 1 >= s && $2 ~ /FLUSH|FUA|MARK/ { print $1 + 1 } END { print NR - 1 }' $W/list |
    sort -un | awk -v s="$start" '
      { n[NR] = $1 }
      END { prev = s; for (i = 1; i <= NR; i++) { q = n[i]
              if (q - prev > 2) { print prev + int((q - prev) / 3); print prev + int(2 * (q - prev) / 3) }
              print q; prev = q } }' | sort -un >$W/points.all
  if [ "$1" = 0 ]; then cp $W/points.all $W/points; return; fi
  awk '{ print $1 + 1 }' $W/events >$W/points.marks
  grep -vxF -f $W/points.marks $W/points.all >$W/points.others
  room=$(( $1 - $(wc -l <$W/points.marks) ))
  { cat $W/points.marks
    [ "$room" -gt 0 ] && awk -v m="$room" '{ a[NR] = $1 } END { if (NR == 0) exit; if (m >= NR) m = NR
      for (i = 0; i < m; i++) print a[1 + int(i * NR / m)] }' $W/points.others
  } | sort -un >$W/points
}

# ---- the check of one point -------------------------------------------------------------------
# check_point N: the first N entries replayed (incrementally on $W/replay.img) and judged; prints
# nothing when the point is good, one "why" line a problem otherwise (and returns 1).
REPLAYED=0
# kiosk_on_copy: `kiosk run` on the mounted copy's state with the frames of $W/cf; its log in
# /tmp/pc-kiosk.log; a start that fails, or a store that does not read, goes into $bad.
kiosk_on_copy() {
  env -i $KENV STATE_DIRECTORY=$CHK/kiosk KIOSK_CAMERA=replay:$W/cf /bin/kiosk run 2>/tmp/pc-kiosk.log
  st=$?
  [ $st = 0 ] || bad="$bad; kiosk run ended $st: $(grep 'level=error' /tmp/pc-kiosk.log | head -1 | cut -c1-120)"
  # A store that cannot be recovered is said at level error (a torn last record, dropped, is a
  # warning: it was never acknowledged, so no door opened for it).
  grep -qE 'event=(credential_store_damaged|credential_store_unavailable)|level=error event=state_damaged' /tmp/pc-kiosk.log &&
    bad="$bad; $(grep -oE 'event=(credential_store_damaged|credential_store_unavailable|state_damaged).*' /tmp/pc-kiosk.log | head -1 | cut -c1-120)"
}
# lap STAGE: the milliseconds since the last lap added to STAGE's total (/tmp/pc-laps).
lap() { u=$(now_ms); echo "$1 $((u - t))" >>/tmp/pc-laps; t=$u; }
check_point() {
  n=$1 bad=""
  t=$(now_ms)
  replay-log --log $W/log.img --replay $W/replay.img --from $REPLAYED --to "$n" || { echo "replay-log failed"; return 1; }
  REPLAYED=$n
  lap replay
  cp $W/replay.img $W/check.img
  CLOOP=$(losetup -f); losetup "$CLOOP" $W/check.img
  if ! mount -t ext4 -o noatime "$CLOOP" $CHK 2>/tmp/pc-mount.err; then
    losetup -d "$CLOOP"; echo "does not mount: $(head -1 /tmp/pc-mount.err)"; return 1
  fi
  lap mount
  # What was promised before the point: the grants, the mode in force, the one commanded next.
  awk -v n="$n" '$1 < n && $2 == "grant" { print $3 }' $W/events >/tmp/pc-granted
  was=$(awk -v n="$n" 'BEGIN { m = "normal" } $1 < n && $2 == "mode" { m = $3 } END { print m }' $W/events)
  next=$(awk -v n="$n" '$1 >= n && $2 == "mode" { print $3; exit }' $W/events)
  # The kiosk's start on this state, the tokens granted so far shown to it again: it must read
  # its store (and refuse each as used) and its mode (a lockdown it restores says so at start).
  rm -rf $W/cf && mkdir -p $W/cf
  ln $W/blank.pgm $W/cf/0000.pgm
  i=1
  while read -r cti; do
    num=$(awk -v c="$cti" '$2 "" == c "" { print $1 }' $P/tokens.list)
    ln $W/tokens/$num.pgm $W/cf/$(printf '%04d' $i).pgm
    i=$((i + 1))
  done </tmp/pc-granted
  kiosk_on_copy
  grep -qE 'event=mode_file_unreadable|event=state_damaged file=[^ ]*/mode ' /tmp/pc-kiosk.log &&
    bad="$bad; $(grep -oE 'event=(mode_file_unreadable|state_damaged file=[^ ]*/mode ).*' /tmp/pc-kiosk.log | head -1 | cut -c1-120)"
  if grep -q 'event=mode mode=lockdown reason=restart' /tmp/pc-kiosk.log; then got=lockdown; else got=normal; fi
  [ "$got" = "$was" ] || [ "$got" = "${next:-$was}" ] || bad="$bad; the kiosk restarts in mode $got, want $was${next:+ or $next}"
  if [ "$got" = lockdown ]; then
    # A lockdown refuses the credentials before the store is asked: again without it.
    rm -f $CHK/kiosk/mode
    kiosk_on_copy
  fi
  lap run
  lost=""
  while read -r cti; do
    grep -q "event=credential result=denied reason=used .*cti=$cti " /tmp/pc-kiosk.log || lost="$lost $cti"
  done </tmp/pc-granted
  [ -z "$lost" ] || bad="$bad; granted before the point but not used at it:$lost ($(grep -oE 'event=credential result=[a-z]+ reason=[a-z ]+' /tmp/pc-kiosk.log | sort | uniq -c | tr -s ' ' | paste -sd, -))"
  lap tokens
  umount $CHK && losetup -d "$CLOOP"
  /usr/sbin/e2fsck -fn $W/check.img >/tmp/pc-fsck.log 2>&1 || bad="$bad; e2fsck -fn: $(grep -v '^Pass\|^e2fsck\|^rootfs:' /tmp/pc-fsck.log | head -2 | paste -sd' ' -)"
  lap fsck
  [ -z "$bad" ] && return 0
  echo "${bad#; }"
  return 1
}

# check_all PHASE MAX: every point of the log (at most MAX; 0: all) checked; POINTS and FAILS.
check_all() {
  points "$2"
  cp $W/base.img $W/replay.img
  REPLAYED=0 POINTS=0 FAILS=0 FIRST=""
  : >/tmp/pc-laps
  for n in $(cat $W/points); do
    why=$(check_point "$n")
    POINTS=$((POINTS + 1))
    if [ -n "$why" ]; then
      FAILS=$((FAILS + 1))
      at=$(awk -v n="$n" '$1 == n - 1 { print $2 }' $W/list)
      after=$(awk -v n="$n" '$1 < n { m = $2 " " $3 } END { print m }' $W/events)
      [ "$FAILS" -le "${SHOW_FAILS:-5}" ] && info "$1: point $n (after entry $((n - 1)) $at; last mark before it: $after): $why"
    fi
  done
  info "$1: ms a point: $(awk '{ s[$1] += $2; if (!($1 in o)) { o[$1] = ++k; n[k] = $1 } } END { for (i = 1; i <= k; i++) printf "%s%s %d", (i > 1 ? ", " : ""), n[i], s[n[i]] / NR * k }' /tmp/pc-laps)"
  echo "powercut: $POINTS points, $FAILS failures ($1, of $(wc -l <$W/points.all) points in a log of $(($(wc -l <$W/list) - 1)) entries, $(elapsed))"
}

# ---- the kiosk's workload -------------------------------------------------------------------------
KLOG=/tmp/pc-workload.log
wait_log() {
  k=$(($2 * 10))
  while [ $k -gt 0 ]; do
    grep -qE "$1" $KLOG && return 0
    kill -0 "$KPID" 2>/dev/null || { sleep 0.2; grep -qE "$1" $KLOG; return; }
    sleep 0.1; k=$((k - 1))
  done
  return 1
}
FEED=0
# feed FILE: the next frame of the replay camera (a FIFO the kiosk waits on).
feed() { FEED=$((FEED + 1)); cat "$1" >$W/frames/$(printf '%04d' $FEED).pgm; }
grant() {  # grant NUM: its credential shown; its grant logged; marked
  cti=$(awk -v n="$1" '$1 "" == n "" { print $2 }' $P/tokens.list)
  feed $P/tokens/$1.pgm
  if wait_log "event=credential result=granted .*cti=$cti " 30; then mark "grant-$1" grant "$cti"
  else fail "powercut: workload: credential $1 (cti $cti) not granted"; show $KLOG; return 1; fi
}
set_mode() {  # set_mode MODE: kiosk mode MODE answered; marked
  said=$(env -i $KENV /bin/kiosk mode "$1" 2>&1)
  if [ "$said" = "mode: $1" ]; then MODES=$((MODES + 1)); mark "mode-$MODES" mode "$1"
  else fail "powercut: workload: kiosk mode $1 said \"$said\""; show $KLOG; return 1; fi
}
workload_kiosk() {
  tokens=$(wc -l <$P/tokens.list) half=$(( $(wc -l <$P/tokens.list) / 2 ))
  rm -rf $W/frames && mkdir -p $W/frames /tmp/pc-run
  ln $W/blank.pgm $W/frames/0000.pgm
  for i in $(seq 1 $((tokens + 1))); do mkfifo $W/frames/$(printf '%04d' $i).pgm; done
  env -i $KENV STATE_DIRECTORY=$MNT/kiosk KIOSK_CAMERA=replay:$W/frames /bin/kiosk run 2>$KLOG &
  KPID=$! MODES=0
  wait_log 'event=ready ' 60 || { fail "powercut: workload: the kiosk never got ready"; show $KLOG; return 1; }
  for i in $(seq 1 $half); do grant $(printf '%03d' $i) || return 1; done
  set_mode lockdown && set_mode normal || return 1
  for i in $(seq $((half + 1)) $tokens); do grant $(printf '%03d' $i) || return 1; done
  set_mode lockdown || return 1
  feed $P/blank.pgm
  wait "$KPID"; st=$?
  [ $st = 0 ] || { fail "powercut: workload: the kiosk ended $st"; show $KLOG; return 1; }
  pass "powercut: workload: the release kiosk granted $tokens one-time credentials and took lockdown, normal, lockdown on ext4 over dm-log-writes ($(elapsed))"
}
workload_writer() {  # workload_writer MODE: pc-writer's grants of every credential, marked
  all=""
  while read -r num cti; do
    all="$all $cti"
    out=$(pc-writer "$1" $MNT/kiosk/used-tokens $all) && [ "$out" = "granted $cti" ] || { fail "powercut: pc-writer $1: $out"; return 1; }
    mark "grant-$num" grant "$cti"
  done <$P/tokens.list
}

# ---- main -----------------------------------------------------------------------------------------
info "powercut: mode $MODE, kernel $(uname -r)"
for m in loop dm-log-writes ext4; do load $m || { fail "powercut: cannot load $m"; echo "RESULT $PASSED passed, $FAILED failed"; exit 1; }; done
pass "powercut: dm-mod, dm-log-writes, loop and ext4 loaded from Debian's kernel $(uname -r) ($(/usr/sbin/dmsetup targets | grep -o 'log-writes *v[0-9.]*'))"
mkdir -p $W $MNT $CHK && mount -t tmpfs -o size=600m tmpfs $W && cp -r $P/tokens $P/blank.pgm $W/
DLOOP=none LLOOP=none KPID=
# Bounded: the kiosk's marks and a few points between; the self-test's worst write path at its
# marks. Full: every point of the kiosk's log, and every broken path (with the control) at its
# marks and up to 30 points in all.
if [ "$MODE" = full ]; then MAXK=0 MAXB=30 VARIANTS="good nosync nofsync:noauto_da_alloc nofsync"
else MAXK=$POINTS_K MAXB=$POINTS_B VARIANTS="nosync"; fi
[ -n "${ONLY_VARIANTS:-}" ] && VARIANTS=${ONLY_VARIANTS#none}

if logged_up && workload_kiosk && logged_down; then
  check_all kiosk $MAXK
  if [ "${EXPECT:-}" = broken ]; then
    if [ "$FAILS" -gt 0 ]; then pass "powercut: kiosk (a build expected to be broken): caught at $FAILS of $POINTS points"
    else fail "powercut: kiosk (a build expected to be broken): caught at none of $POINTS points"; fi
  elif [ "$POINTS" -gt 0 ] && [ "$FAILS" = 0 ]; then pass "powercut: kiosk: $POINTS points after power cuts, each mounts, starts the kiosk, knows every used credential, a mode old or new, fsck clean"
  else fail "powercut: kiosk: $FAILS of $POINTS points failed"; fi
else
  fail "powercut: the kiosk's workload did not run"
  dmesg | tail -5 | show
fi

# The self-test: a write path that is not durable must be caught; pc-writer's own durable path
# (the kiosk's) must not be, or the catches would say nothing.
for variant in $VARIANTS; do
  wmode=${variant%%:*} opts=""; [ "$wmode" != "$variant" ] && opts=${variant#*:}
  if logged_up "$opts" && workload_writer "$wmode" && logged_down; then
    SHOW_FAILS=1 check_all "broken $variant" $MAXB
    caught="caught at $FAILS of $POINTS points"
    case $variant in
      good) if [ "$FAILS" = 0 ]; then pass "powercut: self-test: pc-writer's durable path (the kiosk's: fsync, rename, fsync of the folder) passes $POINTS points"
            else fail "powercut: self-test: pc-writer's durable path failed $FAILS of $POINTS points: the checker or pc-writer is wrong"; fi ;;
      nofsync) info "powercut: self-test: the store renamed without its fsync (the folder fsynced), ext4 mounted noatime (auto_da_alloc on): $caught" ;;
      *) if [ "$FAILS" -gt 0 ]; then pass "powercut: self-test: the store written with $wmode${opts:+ (mounted $opts)} is $caught"
         else fail "powercut: self-test: the store written with $wmode${opts:+ (mounted $opts)} was caught at none of $POINTS points"; fi ;;
    esac
  else
    fail "powercut: self-test $variant did not run"
  fi
done
echo "RESULT $PASSED passed, $FAILED failed"
[ "$FAILED" = 0 ]
