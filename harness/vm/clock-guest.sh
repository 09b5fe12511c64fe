#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# issue 44: /init of the clock group's VMs (harness/vm/clock.sh boots one VM a case): the kiosk in
# credentials mode shown one time-bound credential (valid for a day either side of the host's
# time) in a replay, with no network unless the case is ntp. The case comes on the kernel command
# line (clock_case=rtc|behind|none|ntp); the arm64 VM (harness/vm-arm64/clock.sh) runs it too.
# Prints PASS/FAIL lines, the kiosk's clock and credential events (INFO), the kept floor between
# FLOOR-BEGIN/FLOOR-END, and hands the verdict to QEMU.
export PATH=/bin:/sbin:/usr/bin:/usr/sbin HOME=/tmp
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /run
mkdir -p /state
# The RTC's driver when it is a module (the arm64 VM's rtc-pl031): loaded, it sets the clock as a
# built-in one does at boot (hctosys). The none case loads none.
CASE=$(sed -n 's/.*clock_case=\([a-z]*\).*/\1/p' /proc/cmdline)
if [ "$CASE" != none ] && [ -e /lib/modules/rtc.list ]; then for m in $(cat /lib/modules/rtc.list); do insmod "$m"; done; fi
failed=0
pass() { echo "PASS clock-$CASE: $*"; }
fail() { echo "FAIL clock-$CASE: $*"; failed=1; }
rtcs=$(ls /sys/class/rtc 2>/dev/null | tr '\n' ' ')
echo "INFO clock-$CASE: booted in $(cut -d' ' -f1 /proc/uptime) s; date $(date -u +%Y-%m-%dT%H:%M:%SZ) ($(date +%s)); RTCs: ${rtcs:-none}$(for r in /sys/class/rtc/rtc*; do [ -e "$r/hctosys" ] && printf ' %s hctosys=%s since_epoch=%s' "${r##*/}" "$(cat "$r/hctosys")" "$(cat "$r/since_epoch" 2>/dev/null)"; done)"
[ -e /state/clock-floor ] && echo "INFO clock-$CASE: the floor kept by an earlier boot: $(cat /state/clock-floor)"

kenv() {
  env KIOSK_VERDICT=credentials KIOSK_TRUST_DIR=/trust KIOSK_REVOKED_FILE=/revoked STATE_DIRECTORY=/state \
    KIOSK_CAMERA=replay:/frames KIOSK_ROI=0,0,1,1 KIOSK_REPEAT_MS=0 KIOSK_STATS_S=0 KIOSK_LOG_LEVEL=info "$@"
}
# One run of the kiosk over the replay: its log in /tmp/run-$1.log; the credential's reason, the
# first clock event.
run_kiosk() {
  kenv kiosk run >/tmp/run-"$1".out 2>/tmp/run-"$1".log
  grep -E 'event=(clock|credential) ' /tmp/run-"$1".log | sed "s/^/INFO clock-$CASE: /"
  reason=$(sed -n 's/.*event=credential .*reason=\("[^"]*"\|[^ ]*\).*/\1/p' /tmp/run-"$1".log | head -1 | tr -d '"')
  result=$(sed -n 's/.*event=credential .*result=\([a-z]*\).*/\1/p' /tmp/run-"$1".log | head -1)
  clockline=$(grep 'event=clock ' /tmp/run-"$1".log | head -1)
  [ -n "$clockline" ] || cat /tmp/run-"$1".log /tmp/run-"$1".out | head -12 | sed "s/^/INFO clock-$CASE: kiosk: /"
}
# A field of the clock event (logfmt: quoted when it has a space).
field() {
  v=$(echo "$clockline" | sed -n "s/.* $1=\"\([^\"]*\)\".*/\1/p")
  [ -n "$v" ] || v=$(echo "$clockline" | sed -n "s/.* $1=\([^ \"]*\).*/\1/p")
  echo "$v"
}
show_floor() {
  if [ -e /state/clock-floor ]; then echo FLOOR-BEGIN; cat /state/clock-floor; echo FLOOR-END; fi
}

case $CASE in
rtc)
  # qemu's mc146818 at the host's time, no network: the RTC set the clock at boot.
  [ "$(cat /sys/class/rtc/rtc0/hctosys 2>/dev/null)" = 1 ] && pass "rtc0 set the system clock at boot (hctosys 1)" || fail "rtc0's hctosys is not 1"
  run_kiosk rtc
  [ "$(field source)" = rtc ] && pass "source=rtc ($(field rtc)), setting $(field setting)" || fail "source=$(field source), not rtc: $clockline"
  [ "$result" = granted ] && [ "$reason" = valid ] && pass "the time-bound credential is granted" || fail "the credential: result=$result reason=$reason"
  floor=$(cat /state/clock-floor 2>/dev/null)
  now=$(date +%s)
  if [ -n "$floor" ] && [ "$floor" -le "$now" ] && [ $((now - floor)) -le 60 ]; then pass "the floor kept at stop: $floor ($((now - floor)) s ago)"
  else fail "no floor kept at stop (clock-floor: ${floor:-missing}, now $now)"; fi
  kenv kiosk check >/tmp/check.out 2>&1
  grep -q '^# clock: source rtc (rtc0), floor ' /tmp/check.out && pass "kiosk check: $(grep '^# clock:' /tmp/check.out | cut -c1-100)" || fail "kiosk check: $(grep '^# clock' /tmp/check.out)"
  kenv kiosk doctor >/tmp/doctor.out 2>&1
  grep -q '^PASS clock: source rtc' /tmp/doctor.out && pass "kiosk doctor: $(grep '^PASS clock: source' /tmp/doctor.out | cut -c1-90)" || fail "kiosk doctor: $(grep 'clock:' /tmp/doctor.out)"
  show_floor
  ;;
behind)
  # The RTC at 2001 (a flat battery), the floor kept by the rtc case's boot: wrong for sure.
  floor=$(cat /state/clock-floor 2>/dev/null)
  [ -n "$floor" ] || fail "no floor was given to this boot"
  t0=$(date +%s)
  run_kiosk behind
  t1=$(date +%s)
  [ "$(field source)" = none ] && pass "source=none: $(field why | cut -c1-100)" || fail "source=$(field source), not none: $clockline"
  [ "$result" = denied ] && [ "$reason" = "clock behind" ] && pass "the time-bound credential is denied: clock behind" || fail "the credential: result=$result reason=$reason"
  b=$(field behind_s)
  # The event was said between t0 and t1: behind_s = floor - the clock then.
  if [ -n "$b" ] && [ "$b" -le $((floor - t0)) ] && [ "$b" -ge $((floor - t1)) ]; then
    pass "behind_s=$b: floor $floor minus the clock then ($t0..$t1)"
  else fail "behind_s=${b:-missing}, expected floor $floor minus $t0..$t1: $((floor - t1))..$((floor - t0))"; fi
  [ "$(cat /state/clock-floor)" = "$floor" ] && pass "the floor was not written while behind" || fail "the floor changed: $(cat /state/clock-floor)"
  kenv kiosk doctor >/tmp/doctor.out 2>&1
  grep -q '^FAIL clock: the clock (2001-' /tmp/doctor.out && pass "kiosk doctor FAILs clock: $(grep '^FAIL clock:' /tmp/doctor.out | cut -c1-110)" || fail "kiosk doctor: $(grep 'clock:' /tmp/doctor.out)"
  ;;
none)
  # No RTC at all (amd64: QEMU's microvm with rtc=off; arm64: the PL031's driver not loaded):
  # nothing vouches for the clock.
  [ -z "$rtcs" ] && pass "no RTC in /sys/class/rtc" || fail "an RTC is there: $rtcs"
  run_kiosk none
  [ "$(field source)" = none ] && pass "source=none: $(field why)" || fail "source=$(field source), not none: $clockline"
  [ "$result" = denied ] && [ "$reason" = "clock not synchronized" ] && pass "the time-bound credential is denied: clock not synchronized" || fail "the credential: result=$result reason=$reason"
  [ ! -e /state/clock-floor ] && pass "no floor kept (no source vouched for the clock)" || fail "a floor was kept: $(cat /state/clock-floor)"
  kenv kiosk doctor >/tmp/doctor.out 2>&1
  grep -q '^FAIL clock: source none: .*an NTP server on the site' /tmp/doctor.out && pass "kiosk doctor FAILs clock and says what would fix it" || fail "kiosk doctor: $(grep 'clock:' /tmp/doctor.out)"
  ;;
ntp)
  # The RTC at 2001 and the rtc case's floor; then chrony, on QEMU's user network to an NTP
  # server the host started (10.0.2.2 is the host's loopback): source=ntp once it has synced.
  floor=$(cat /state/clock-floor 2>/dev/null)
  run_kiosk before
  [ "$reason" = "clock behind" ] && pass "before NTP: denied clock behind (source=$(field source), behind_s=$(field behind_s))" || fail "before NTP: result=$result reason=$reason"
  for m in $(cat /lib/modules/net.list); do insmod "$m" 2>/dev/null; done
  ip link set lo up
  ip link set eth0 up && ip addr add 10.0.2.15/24 dev eth0 || fail "no eth0"
  port=$(sed -n 's/.*ntp_port=\([0-9]*\).*/\1/p' /proc/cmdline)
  printf 'server 10.0.2.2 port %s iburst minpoll -4 maxpoll -4\nmakestep 1 -1\ncmdport 0\npidfile /run/chronyd.pid\n' "$port" >/tmp/chrony.conf
  chronyd -f /tmp/chrony.conf -u root -L 0 -l /tmp/chronyd.log
  synced=""
  for i in $(seq 1 90); do
    kenv kiosk check >/tmp/check.out 2>&1
    if grep -q '^# clock: source ntp' /tmp/check.out; then synced=$i; break; fi
    sleep 1
  done
  if [ -n "$synced" ]; then pass "kiosk check says source ntp after ${synced} s: $(grep '^# clock:' /tmp/check.out | cut -c1-100)"
  else fail "no NTP sync in 90 s: $(grep '^# clock:' /tmp/check.out); chronyd: $(tail -3 /tmp/chronyd.log | tr '\n' ' ')"; fi
  echo "INFO clock-$CASE: date now $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  run_kiosk after
  [ "$(field source)" = ntp ] && pass "source=ntp" || fail "source=$(field source), not ntp: $clockline"
  [ "$result" = granted ] && [ "$reason" = valid ] && pass "the time-bound credential is granted once NTP set the clock" || fail "after NTP: result=$result reason=$reason"
  f2=$(cat /state/clock-floor 2>/dev/null)
  [ -n "$f2" ] && [ "$f2" -gt "$floor" ] && pass "the floor kept rose ($floor -> $f2)" || fail "the floor kept: $f2 (was $floor)"
  ;;
*) fail "unknown case '$CASE'" ;;
esac
echo "RESULT clock-$CASE failed=$failed"
sync
# amd64: isa-debug-exit gives QEMU the verdict; arm64 (no such port): the RESULT line does.
if command -v vmtool >/dev/null; then if [ "$failed" = 0 ]; then vmtool exit 0; else vmtool exit 1; fi; fi
poweroff -f
