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
#    on the host), takes a lockdown by `kiosk mode`, ends it, grants more, lets in pretix tickets
#    (minted by pretix itself), applies site bundle 1 (KIOSK_BUNDLE_FILE and SIGHUP), lets in
#    more, applies bundle 2, and takes a lockdown again; all the while it spools its scans for a
#    broker that is away (KIOSK_MQTT_URL on this VM), until a Mosquitto starts and the spool
#    drains. After each step is answered (the grant or entry logged, `kiosk mode` answered, the
#    bundle's `applied`, the spool holding every scan so far, the spool empty) a MARK goes into the
#    log, so the log says what the kiosk had promised before each entry.
# 3. The check, at each point (a prefix of the log: after every FLUSH and FUA entry and every mark,
#    and two points between each two of them): the prefix replayed (replay-log) onto a copy of the
#    file system as it was made, mounted (the journal recovered), then the kiosk's own start
#    (`kiosk run` on that state, the credentials granted before the point shown to it again): it
#    must start (exit 0), read its store (no state_damaged at level error) and its mode file (no
#    state_damaged naming it), restart in the mode in force at the point or the one commanded next
#    (a lockdown it restores says so: `mode mode=lockdown reason=restart`), keep the site bundle
#    applied before the point or the one being applied (`bundle_in_force`, verified again; none
#    before the first), and refuse as `used` every one-time credential and every ticket whose
#    grant or entry was marked before the point (in a lockdown it refuses them for that reason
#    first: the mode file is then set aside and the kiosk started again); the spool file, before
#    that start, must hold no torn message (every whole line an event or its end, every event a
#    whole JSON object) and, until the drain began, every scan spooled before the point; then
#    unmounted, `e2fsck -fn` must find the file system clean. The checks of the entries, the
#    bundle and the spool are then shown to fail on damage made for them (check_the_checks).
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
KENV="PATH=/bin:/usr/bin:/sbin:/usr/sbin HOME=/tmp KIOSK_VERDICT=credentials KIOSK_TRUST_DIR=$P/trust KIOSK_REQUIRE_SYNCED_CLOCK=0 RUNTIME_DIRECTORY=/tmp/pc-run KIOSK_SITE_KEY=$P/site.pem"
# The workload's kiosk also takes site bundles from a file and reports its scans to a broker on
# this VM (away until the spool is drained). The checks' kiosk reads neither: the file would apply
# a bundle at start, and the spool is checked on the file itself.
WENV="KIOSK_BUNDLE_FILE=$W/bundle.cose KIOSK_MQTT_URL=mqtt://127.0.0.1:1883"
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
# spool_check FILE N: the MQTT spool as a power cut at point N left it (Sources/Fleet/Spool.swift:
# "S SEQ BASE64" an event, "X SEQ" it is gone, a line each). Every whole line must parse and every
# event's payload decode to a whole JSON object: a torn message is a failure; only a last line
# without its newline (an append the cut stopped before its fsync) may be cut short. Until the
# broker drained it, the spool must hold every scan spooled before the point. Says why in SPOOL_WHY.
spool_check() {
  SPOOL_WHY=""
  want=$(awk -v n="$2" '$1 < n && $2 == "spool" { k = $3 } $1 < n && $2 == "drain" { k = 0 } END { print k + 0 }' $W/events)
  if [ ! -e "$1" ]; then
    [ "$want" = 0 ] && return 0
    SPOOL_WHY="no spool, $want scans spooled before the point"; return 1
  fi
  lines=$(wc -l <"$1")   # whole lines; a last one without its newline is not counted
  head -n "$lines" "$1" >/tmp/pc-spool
  torn=$(awk '!(($1 == "S" && NF == 3 && $2 ~ /^[0-9]+$/ && $3 ~ /^[A-Za-z0-9+\/]+=*$/) || ($1 == "X" && NF == 2 && $2 ~ /^[0-9]+$/)) { print NR; exit }' /tmp/pc-spool)
  [ -z "$torn" ] || { SPOOL_WHY="spool line $torn torn: $(sed -n "${torn}p" /tmp/pc-spool | cut -c1-60 | od -c | head -2 | tr -s ' ' | paste -sd' ' -)"; return 1; }
  for b in $(awk '$1 == "S" { print $3 }' /tmp/pc-spool); do
    json=$(echo "$b" | base64 -d 2>/dev/null)
    case $json in '{"id":"'*'}') ;; *) SPOOL_WHY="a spooled event is no whole JSON object: $(echo "$json" | cut -c1-60)"; return 1 ;; esac
  done
  live=$(awk '$1 == "S" { s[$2] = 1 } $1 == "X" { delete s[$2] } END { n = 0; for (k in s) n++; print n }' /tmp/pc-spool)
  [ "$live" -ge "$want" ] || { SPOOL_WHY="the spool holds $live events, $want were spooled before the point"; return 1; }
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
  awk -v n="$n" '$1 < n && $2 == "ticket" { print $3 }' $W/events >/tmp/pc-entered
  # The checker's own test (check_the_checks): the point's state damaged as the checks must see.
  case ${DAMAGE:-} in
    ticket) awk '{ print $2 }' $P/tickets.list >/tmp/pc-entered ;;  # every ticket claimed entered
    bundle) f=$(readlink -f $CHK/kiosk/bundle)/bundle.cose && head -c 200 "$f" >/tmp/pc-cut && cat /tmp/pc-cut >"$f" ;;
    spool) awk 'NR == 2 { print substr($0, 1, 20); next } { print }' $CHK/kiosk/mqtt-spool >/tmp/pc-cut && cat /tmp/pc-cut >$CHK/kiosk/mqtt-spool ;;
  esac
  bwas=$(awk -v n="$n" 'BEGIN { b = "none" } $1 < n && $2 == "bundle" { b = $3 } END { print b }' $W/events)
  bnext=$(awk -v n="$n" '$1 >= n && $2 == "bundle" { print $3; exit }' $W/events)
  # The spool, as the file is at the point (before any kiosk reads it): no torn message.
  spool_check $CHK/kiosk/mqtt-spool "$n" || bad="$bad; $SPOOL_WHY"
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
  while read -r sub; do
    num=$(awk -v s="$sub" '$2 == s { print $1 }' $P/tickets.list)
    ln $W/tickets/$num.pgm $W/cf/$(printf '%04d' $i).pgm
    i=$((i + 1))
  done </tmp/pc-entered
  kiosk_on_copy
  # The site bundle in force: the one applied before the point, or the one being applied.
  bgot=$(grep -o 'event=bundle_in_force version=[0-9]*' /tmp/pc-kiosk.log | head -1 | cut -d= -f3)
  grep -q 'event=bundle_kept_unusable' /tmp/pc-kiosk.log && bad="$bad; $(grep -o 'event=bundle_kept_unusable.*' /tmp/pc-kiosk.log | head -1 | cut -c1-120)"
  [ "${bgot:-none}" = "$bwas" ] || [ "${bgot:-none}" = "${bnext:-$bwas}" ] || bad="$bad; the bundle in force is ${bgot:-none}, want $bwas${bnext:+ or $bnext}"
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
  lost=""
  while read -r sub; do
    grep -q "event=credential result=denied reason=used kid=pc sub=$sub " /tmp/pc-kiosk.log || lost="$lost $sub"
  done </tmp/pc-entered
  [ -z "$lost" ] || bad="$bad; tickets entered before the point but not used at it:$lost"
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

# check_the_checks: the checks of the entries, the bundle and the spool fail when they should: a
# point before the first entry with every ticket claimed entered (pretix would let them in again),
# the last point with the bundle in force cut short, the point after the first spooled scans with
# a spooled event cut in half. Each must fail, and for that reason.
check_the_checks() {
  before=$(awk '$2 == "spool" { print $1 + 1; exit }' $W/events)
  last=$(awk '$2 == "bundle" { n = $1 + 1 } END { print n }' $W/events)
  for d in "ticket $before tickets entered before the point but not used" "bundle $last bundle_kept_unusable" "spool $before a spooled event is no whole JSON object"; do
    set -- $d
    what=$1 at=$2; shift 2
    cp $W/base.img $W/replay.img
    why=$(DAMAGE=$what check_point "$at")
    case $why in
      *"$*"*) pass "powercut: the $what check fails when it should (point $at: $(echo "${why%%;*}" | cut -c1-140))" ;;
      *) fail "powercut: the $what check, damaged at point $at, says \"$why\", want \"$*\"" ;;
    esac
  done
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
ticket() {  # ticket NUM: its pretix ticket shown; its entry logged; marked
  sub=$(awk -v n="$1" '$1 "" == n "" { print $2 }' $P/tickets.list)
  feed $P/tickets/$1.pgm
  if wait_log "event=credential result=granted reason=valid kid=pc sub=$sub " 30; then mark "ticket-$1" ticket "$sub"
  else fail "powercut: workload: ticket $1 ($sub) not let in"; show $KLOG; return 1; fi
}
apply_bundle() {  # apply_bundle VERSION: the bundle file replaced, SIGHUP; its apply logged; marked
  cp $P/bundle-$1.cose $W/bundle.new && mv $W/bundle.new $W/bundle.cose && kill -HUP "$KPID"
  if wait_log "event=bundle result=applied version=$1 " 30; then mark "bundle-$1" bundle "$1"
  else fail "powercut: workload: bundle $1 not applied"; show $KLOG; return 1; fi
}
spooled() { [ -e $MNT/kiosk/mqtt-spool ] && grep -c '^S ' $MNT/kiosk/mqtt-spool || echo 0; }
spool_live() { awk '$1 == "S" { s[$2] = 1 } $1 == "X" { delete s[$2] } END { n = 0; for (k in s) n++; print n }' $MNT/kiosk/mqtt-spool; }
spool_mark() {  # spool_mark N: once the spool holds N scans (each appended and fsynced), marked
  k=100
  while [ "$(spooled)" -lt "$1" ] && [ $k -gt 0 ]; do sleep 0.1; k=$((k - 1)); done
  if [ "$(spooled)" -ge "$1" ]; then mark "spool-$1" spool "$1"
  else fail "powercut: workload: the spool holds $(spooled) scans, want $1"; return 1; fi
}
drain() {  # the broker comes (marked before: from then on events may go): the kiosk sends what it spooled; marked once the spool holds none
  mark drain drain - || return 1
  ifconfig lo 127.0.0.1 up
  printf 'listener 1883 127.0.0.1\nallow_anonymous true\nuser root\npersistence false\n' >$W/mosquitto.conf
  mosquitto -c $W/mosquitto.conf >/tmp/pc-mosquitto.log 2>&1 &
  MPID=$!
  k=600
  while [ "$(spool_live)" != 0 ] && [ $k -gt 0 ]; do sleep 0.1; k=$((k - 1)); done
  if [ "$(spool_live)" = 0 ]; then mark drained drained -
  else fail "powercut: workload: the spool still holds $(spool_live) events 60 s after the broker came"; show /tmp/pc-mosquitto.log; show $KLOG; return 1; fi
}
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
  tickets=$(wc -l <$P/tickets.list) thalf=$(( $(wc -l <$P/tickets.list) / 2 ))
  rm -rf $W/frames $W/bundle.cose && mkdir -p $W/frames /tmp/pc-run
  ln $W/blank.pgm $W/frames/0000.pgm
  for i in $(seq 1 $((tokens + tickets + 1))); do mkfifo $W/frames/$(printf '%04d' $i).pgm; done
  env -i $KENV $WENV STATE_DIRECTORY=$MNT/kiosk KIOSK_CAMERA=replay:$W/frames /bin/kiosk run 2>$KLOG &
  KPID=$! MODES=0
  wait_log 'event=ready ' 60 || { fail "powercut: workload: the kiosk never got ready"; show $KLOG; return 1; }
  for i in $(seq 1 $half); do grant $(printf '%03d' $i) || return 1; done
  set_mode lockdown && set_mode normal || return 1
  for i in $(seq $((half + 1)) $tokens); do grant $(printf '%03d' $i) || return 1; done
  spool_mark $tokens || return 1
  for i in $(seq 1 $thalf); do ticket $(printf '%03d' $i) || return 1; done
  apply_bundle 1 || return 1
  for i in $(seq $((thalf + 1)) $tickets); do ticket $(printf '%03d' $i) || return 1; done
  apply_bundle 2 || return 1
  spool_mark $((tokens + tickets)) || return 1
  drain || return 1
  set_mode lockdown || return 1
  feed $P/blank.pgm
  wait "$KPID"; st=$?
  kill "$MPID" 2>/dev/null
  [ $st = 0 ] || { fail "powercut: workload: the kiosk ended $st"; show $KLOG; return 1; }
  pass "powercut: workload: the release kiosk granted $tokens one-time credentials, took lockdown, normal, $tickets pretix entries, site bundles 1 and 2, $((tokens + tickets)) scans spooled with the broker away and drained when it came, lockdown, on ext4 over dm-log-writes ($(elapsed))"
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
mkdir -p $W $MNT $CHK && mount -t tmpfs -o size=600m tmpfs $W && cp -r $P/tokens $P/tickets $P/blank.pgm $W/
DLOOP=none LLOOP=none KPID= MPID=
# Bounded: the kiosk's marks and a few points between; the self-test's worst write path at its
# marks. Full: every point of the kiosk's log, and every broken path (with the control) at its
# marks and up to 30 points in all.
if [ "$MODE" = full ]; then MAXK=0 MAXB=30 VARIANTS="good nosync nofsync:noauto_da_alloc nofsync"
else MAXK=$POINTS_K MAXB=$POINTS_B VARIANTS="nosync"; fi
[ -n "${ONLY_VARIANTS:-}" ] && VARIANTS=${ONLY_VARIANTS#none}

if logged_up && workload_kiosk && logged_down; then
  check_all kiosk $MAXK
  [ "${EXPECT:-}" = broken ] || check_the_checks
  if [ "${EXPECT:-}" = broken ]; then
    if [ "$FAILS" -gt 0 ]; then pass "powercut: kiosk (a build expected to be broken): caught at $FAILS of $POINTS points"
    else fail "powercut: kiosk (a build expected to be broken): caught at none of $POINTS points"; fi
  elif [ "$POINTS" -gt 0 ] && [ "$FAILS" = 0 ]; then pass "powercut: kiosk: $POINTS points after power cuts, each mounts, starts the kiosk, knows every used credential and ticket entry, a mode and a bundle old or new, the spool with no torn message, fsck clean"
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
