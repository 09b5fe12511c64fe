#!/bin/sh
# The checks, run inside the VM by /init against the real drivers: vivid (V4L2) and gpio-sim
# (GPIO), with the built kiosk. One PASS/FAIL line per check, then "RESULT N passed, M failed";
# exit 0 when nothing failed. Each group is a function group_NAME, run in the order of the list at
# the end; VM_GROUPS=gpio,faults on the kernel command line (KIOSK_VM_APPEND) runs only those.
KVER=$(cat /tests/kernel)
PASSED=0 FAILED=0
pass() { echo "PASS $*"; PASSED=$((PASSED + 1)); }
fail() { echo "FAIL $*"; FAILED=$((FAILED + 1)); }
info() { echo "INFO $*"; }
show() { sed 's/^/INFO   | /' "$@"; }   # a log, shown under a FAIL

# load MODULE [PARAMS]: insmod it and what it needs (order computed on the host), params on it.
load() {
  m=$1; shift
  for ko in $(cat /lib/modules/$KVER/deps/$m); do
    name=$(basename "$ko" .ko | tr - _)
    grep -q "^$name " /proc/modules && continue
    if [ "$(basename "$ko" .ko)" = "$m" ]; then insmod "$ko" "$@"; else insmod "$ko"; fi || return 1
  done
}

# ---- the kiosk ---------------------------------------------------------------------------------
LOG=/tmp/kiosk.log
# kiosk_start VAR=VALUE...: `kiosk run` in the background, a clean environment plus these; stderr
# to $LOG; its pid in KPID.
kiosk_start() {
  : >"$LOG"
  env -i PATH=/bin:/usr/bin HOME=/tmp "$@" /bin/kiosk run 2>"$LOG" &
  KPID=$!
}
# wait_log PATTERN SECONDS: until an egrep PATTERN shows in $LOG; false on timeout or if the kiosk
# ended without it.
wait_log() {
  n=$(($2 * 10))
  while [ "$n" -gt 0 ]; do
    grep -qE "$1" "$LOG" && return 0
    kill -0 "$KPID" 2>/dev/null || { sleep 0.2; grep -qE "$1" "$LOG"; return; }
    sleep 0.1; n=$((n - 1))
  done
  return 1
}
# kiosk_wait SECONDS: wait for the kiosk to end by itself (SIGKILL after SECONDS); KSTATUS.
kiosk_wait() {
  (sleep "$1"; kill -KILL "$KPID" 2>/dev/null) &
  dog=$!
  wait "$KPID"; KSTATUS=$?
  kill "$dog" 2>/dev/null; wait "$dog" 2>/dev/null
}
# kiosk_stop: SIGTERM, then wait (SIGKILL after 5 s); KSTATUS and STOP_MS (signal to exit).
kiosk_stop() {
  t0=$(vmtool ms)
  kill -TERM "$KPID" 2>/dev/null
  kiosk_wait 5
  STOP_MS=$(($(vmtool ms) - t0))
}
# The contract: SIGTERM stops the kiosk within a second, exit 0.
check_stop() {
  kiosk_stop
  if [ "$KSTATUS" = 0 ] && [ "$STOP_MS" -lt 1000 ]; then pass "$1: SIGTERM stops it, exit 0 in $STOP_MS ms"
  else fail "$1: SIGTERM gave exit $KSTATUS after $STOP_MS ms (want 0 within 1000 ms)"; show "$LOG"; fi
}

# ---- vivid: an HDMI output looped into an HDMI capture ----------------------------------------
CAP=/dev/video0 OUT=/dev/video1 FEEDPID=
dv_index() {  # the first progressive DV timing of size W H
  v4l2-ctl -d $CAP --list-dv-timings | awk -v w="$1" -v h="$2" '
    /Index:/ { i = $2 } /Active width:/ { aw = $3 } /Active height:/ { ah = $3 }
    /Frame format: progressive/ && aw == w && ah == h && !done { print i; done = 1 }'
}
unfeed() {
  [ -n "$FEEDPID" ] && { kill "$FEEDPID" 2>/dev/null; wait "$FEEDPID" 2>/dev/null; }
  FEEDPID=
}
# feed NAME FOURCC W H: stream /frames/NAME.raw, looped, into vivid's output; its capture shows it.
feed() {
  unfeed
  idx=$(dv_index "$3" "$4")
  [ -n "$idx" ] || { info "no DV timing for $3x$4"; return 1; }
  v4l2-ctl -d $CAP --set-dv-bt-timings index="$idx" >/dev/null &&
  v4l2-ctl -d $OUT --set-dv-bt-timings index="$idx" >/dev/null &&
  v4l2-ctl -d $CAP --set-fmt-video=width="$3",height="$4",pixelformat="$2" &&
  v4l2-ctl -d $OUT --set-fmt-video-out=width="$3",height="$4",pixelformat="$2" &&
  v4l2-ctl -d $CAP -c loop_video=1,osd_text_mode=2 || return 1
  v4l2-ctl -d $OUT --stream-out-mmap --stream-from="/frames/$1.raw" --stream-loop >/dev/null 2>/tmp/feed.err &
  FEEDPID=$!
  sleep 0.3
  kill -0 "$FEEDPID" 2>/dev/null || { show /tmp/feed.err; return 1; }
}

# ---- gpio-sim: one chip, 8 lines, line 3 named "buzzer" ----------------------------------------
SIM=/sys/kernel/config/gpio-sim/kiosk
BUZZ=3 BEEP_MS=200
gpio_setup() {
  mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config || return 1
  mkdir $SIM $SIM/bank0 $SIM/bank0/line$BUZZ &&
  echo 8 >$SIM/bank0/num_lines && echo kiosk-sim >$SIM/bank0/label &&
  echo buzzer >$SIM/bank0/line$BUZZ/name && echo 1 >$SIM/live || return 1
  CHIP=$(cat $SIM/bank0/chip_name)
  SIMDIR=/sys/devices/platform/$(cat $SIM/dev_name)/$CHIP/sim_gpio$BUZZ
  [ -e "$SIMDIR/value" ]
}
line_info() { gpioinfo "$CHIP" | grep -E "line +$BUZZ:"; }
line_used_by_kiosk() { line_info | grep -q '"kiosk".*output.*\[used\]'; }
line_unused() { line_info | grep -q 'unused'; }

# ---- 1. capture --------------------------------------------------------------------------------
# capture_case FRAME FOURCC W H KIOSK_FORMAT SYMBOLOGY DATA
capture_case() {
  label="capture $1 through vivid, KIOSK_FORMAT=$5"
  feed "$1" "$2" "$3" "$4" || { fail "$label: could not set up vivid"; return; }
  kiosk_start KIOSK_SIZE="$3x$4" KIOSK_FORMAT="$5"
  if wait_log 'event=scan ' 20; then
    sleep 0.5   # more frames of the same code: still one report
    scans=$(grep -c 'event=scan ' "$LOG")
    if grep -qE "event=camera_open .*format=$2 size=$3x$4" "$LOG" &&
       grep -qE "event=scan symbology=\"?$6\"? data=\"?$7\"?( |$)" "$LOG" && [ "$scans" = 1 ]; then
      pass "$label: $2 $3x$4 opened, one scan $6 $7"
    else
      fail "$label: want camera_open $2 $3x$4 and one scan $6 $7 ($scans scans)"; show "$LOG"
    fi
  else
    fail "$label: no scan within 20 s"; show "$LOG"
  fi
  check_stop "$label"
}

group_capture() {
  for code in "qr QR-Code KIOSK-VM-QR-0001" "ean13 EAN-13 4006381333931" "code128 CODE-128 Kiosk128"; do
    set -- $code
    capture_case "$1-GREY-640x480" GREY 640 480 GREY "$2" "$3"
    capture_case "$1-YUYV-640x480" YUYV 640 480 YUYV "$2" "$3"
    capture_case "$1-YUYV-1280x720" YUYV 1280 720 YUYV "$2" "$3"
  done
  capture_case qr-GREY-640x480 GREY 640 480 auto QR-Code KIOSK-VM-QR-0001   # auto picks GREY first

  label="capture a QR code outside the ROI"
  feed outside-YUYV-640x480 YUYV 640 480 || { fail "$label: could not set up vivid"; return; }
  kiosk_start KIOSK_FORMAT=YUYV
  if wait_log 'event=ready ' 20; then
    sleep 2
    if grep -q 'event=scan ' "$LOG"; then fail "$label: reported"; show "$LOG"
    else pass "$label: not reported in 2 s of frames"; fi
  else
    fail "$label: never ready"; show "$LOG"
  fi
  check_stop "$label"
}

# ---- 2. GPIO -----------------------------------------------------------------------------------
# pulses FILE LEVEL: from `vmtool sample` output, the widths (ms) of the pulses at LEVEL, one a line.
pulses() {
  awk -v lv="$2" '$2 == "end" || $2 < 0 { next }
    { if ($2 == lv && !on) { on = 1; t = $1 } else if ($2 != lv && on) { on = 0; printf "%d\n", $1 - t } }
    END { if (on) print "open" }' "$1"
}
# buzzer_case ACTIVE_LOW: a scan beeps once for about KIOSK_BEEP_MS at the active level; the line is
# held by "kiosk" while it runs, inactive without a glitch, and released inactive after SIGTERM.
buzzer_case() {
  if [ "$1" = 1 ]; then active=0 idle=1 pull=pull-up label="buzzer active-low"
  else active=1 idle=0 pull=pull-down label="buzzer active-high"; fi
  # The pull is the board's: what the line shows when nobody drives it (inactive for this wiring).
  echo $pull >"$SIMDIR/pull"
  feed qr-YUYV-640x480 YUYV 640 480 || { fail "$label: could not set up vivid"; return; }
  vmtool sample "$SIMDIR/value" 60000 >/tmp/sample.txt &
  spid=$!
  sleep 0.1
  kiosk_start KIOSK_FORMAT=YUYV KIOSK_GPIO_CHIP="$CHIP" KIOSK_BUZZER_LINE=$BUZZ \
    KIOSK_BUZZER_ACTIVE_LOW="$1" KIOSK_BEEP_MS=$BEEP_MS KIOSK_LOG_LEVEL=debug
  if ! wait_log 'event=scan ' 20; then
    fail "$label: no scan within 20 s"; show "$LOG"; kiosk_stop; kill $spid; wait $spid; return
  fi
  sleep 1
  if line_used_by_kiosk; then pass "$label: line $BUZZ held by \"kiosk\" as an output while running"
  else fail "$label: line $BUZZ not held by kiosk: $(line_info)"; fi
  check_stop "$label"
  sleep 0.2
  kill $spid; wait $spid 2>/dev/null
  widths=$(pulses /tmp/sample.txt $active | tr '\n' ' ')
  set -- $widths
  lo=$((BEEP_MS * 8 / 10)) hi=$((BEEP_MS * 2 + 100))
  if [ $# = 1 ] && [ "$1" != open ] && [ "$1" -ge $lo ] && [ "$1" -le $hi ]; then
    pass "$label: one beep at level $active for $1 ms (KIOSK_BEEP_MS=$BEEP_MS)"
  else
    fail "$label: want one pulse at level $active of $lo-$hi ms, got: ${widths:-none}"; show /tmp/sample.txt; show "$LOG"
  fi
  last=$(awk '$2 != "end" { v = $2 } END { print v }' /tmp/sample.txt)
  if [ "$last" = $idle ] && line_unused; then pass "$label: after stop the line is inactive ($idle) and released"
  else fail "$label: after stop the line is $last, $(line_info)"; fi
}

# chip_case HOW CHIP: the kiosk finds the chip named so and takes the buzzer line.
chip_case() {
  label="KIOSK_GPIO_CHIP by $1 ($2)"
  kiosk_start KIOSK_FORMAT=YUYV KIOSK_GPIO_CHIP="$2" KIOSK_BUZZER_LINE=$BUZZ
  if wait_log 'event=ready ' 20 && line_used_by_kiosk; then pass "$label: line $BUZZ held by kiosk"
  else fail "$label: line not taken: $(line_info)"; show "$LOG"; fi
  check_stop "$label"
}

group_gpio() {
  gpio_setup || { fail "gpio-sim: could not make a chip through configfs"; return; }
  info "gpio-sim chip $CHIP, buzzer at $SIMDIR"
  buzzer_case 0
  buzzer_case 1
  echo pull-down >"$SIMDIR/pull"
  feed qr-YUYV-640x480 YUYV 640 480
  chip_case name "$CHIP"
  chip_case path "/dev/$CHIP"
  chip_case label kiosk-sim

  label="buzzer line held by another program"
  gpioset --mode=signal "$CHIP" $BUZZ=0 &
  gpid=$!
  sleep 0.3
  kiosk_start KIOSK_FORMAT=YUYV KIOSK_GPIO_CHIP="$CHIP" KIOSK_BUZZER_LINE=$BUZZ
  kiosk_wait 10
  if [ "$KSTATUS" = 69 ] && grep -qE 'event=gpio_unavailable .*held_by="?gpioset"?' "$LOG"; then
    pass "$label: exit 69, gpio_unavailable held_by=gpioset"
  else
    fail "$label: want exit 69 and gpio_unavailable held_by=gpioset, got exit $KSTATUS"; show "$LOG"
  fi
  kill $gpid; wait $gpid 2>/dev/null

  label="no such GPIO chip"
  kiosk_start KIOSK_FORMAT=YUYV KIOSK_GPIO_CHIP=no-such-chip KIOSK_BUZZER_LINE=$BUZZ
  kiosk_wait 10
  if [ "$KSTATUS" = 69 ] && grep -q 'event=gpio_unavailable ' "$LOG"; then pass "$label: exit 69, gpio_unavailable"
  else fail "$label: want exit 69 and gpio_unavailable, got exit $KSTATUS"; show "$LOG"; fi
}

# ---- 1b. MJPG: v4l2loopback as an MJPG-only camera, libv4l converting ------------------------------
group_mjpg() {
  label="capture qr MJPG 640x480 through v4l2loopback"
  # max_buffers: the default 2 is fewer than the kiosk asks for (it refuses fewer than 3).
  load v4l2loopback devices=1 video_nr=7 exclusive_caps=1 card_label=kiosk-mjpg max_buffers=4 || { fail "$label: load v4l2loopback"; return; }
  LB=/dev/video7
  jpg=/tmp/qr.mjpg
  cp /frames/qr-MJPG-640x480.jpg $jpg
  # v4l2-ctl reads whole buffers (sizeimage bytes) from the file: pad the JPEG to one buffer so
  # every buffer starts with it (a JPEG decoder stops at its end marker).
  size=$(v4l2-ctl -d $LB --set-fmt-video-out=width=640,height=480,pixelformat=MJPG --get-fmt-video-out |
         awk '/Size Image/ { print $4 }')
  info "v4l2loopback MJPG sizeimage ${size:-unknown}, JPEG $(wc -c <$jpg) bytes"
  [ -n "$size" ] && dd if=/dev/zero of=$jpg bs=1 count=0 seek="$size" 2>/dev/null
  v4l2-ctl -d $LB --set-fmt-video-out=width=640,height=480,pixelformat=MJPG \
    --stream-out-mmap --stream-from=$jpg --stream-loop >/dev/null 2>/tmp/lb.err &
  lbpid=$!
  sleep 0.5
  for format in MJPG auto; do   # auto: an MJPG-only camera is converted to YU12 by libv4l
    kiosk_start KIOSK_CAMERA=$LB KIOSK_FORMAT=$format
    if wait_log 'event=scan ' 20 && grep -qE 'event=scan symbology="?QR-Code"? data="?KIOSK-VM-QR-0001"?( |$)' "$LOG"; then
      pass "$label, KIOSK_FORMAT=$format: $(grep -o 'event=camera_open .*' "$LOG" | head -1 | cut -d' ' -f3-4), scan QR-Code KIOSK-VM-QR-0001"
    else
      fail "$label, KIOSK_FORMAT=$format: no scan of the QR code within 20 s"; show "$LOG"; tr -d '>' </tmp/lb.err | tail -5 | show
    fi
    check_stop "$label, KIOSK_FORMAT=$format"
  done
  kill $lbpid; wait $lbpid 2>/dev/null
}

# ---- 3. faults ---------------------------------------------------------------------------------
# The camera goes away while streaming, as a USB camera does when unplugged. `rmmod vivid` is
# refused while the kiosk holds /dev/video0 open (the open file holds the module), so the device is
# unbound from its driver instead: the same video_unregister_device() an unplug gives. Today: a
# camera_lost warning, then exit 69 (systemd restarts the service). When the kiosk learns to
# reopen, bind the device again (echo vivid.0 > .../bind) and expect camera_reopen here instead.
group_faults() {
  label="vivid device removed while streaming"
  feed qr-YUYV-640x480 YUYV 640 480 || { fail "$label: could not set up vivid"; return; }
  kiosk_start KIOSK_FORMAT=YUYV
  wait_log 'event=scan ' 20 || { fail "$label: no scan before the fault"; show "$LOG"; kiosk_stop; return; }
  unfeed
  if rmmod vivid 2>/tmp/rmmod.err; then info "rmmod vivid succeeded with the device open"
  else info "rmmod vivid with the device open: $(cat /tmp/rmmod.err); unbinding the device"
    echo vivid.0 >/sys/bus/platform/drivers/vivid/unbind || { fail "$label: could not unbind vivid.0"; kiosk_stop; return; }
  fi
  t0=$(vmtool ms)
  kiosk_wait 10
  ms=$(($(vmtool ms) - t0))
  if [ "$KSTATUS" = 69 ] && grep -q 'level=warning event=camera_lost ' "$LOG"; then
    pass "$label: camera_lost, exit 69 after $ms ms"
  else
    fail "$label: want camera_lost and exit 69, got exit $KSTATUS after $ms ms"; show "$LOG"
  fi
  if ! grep -q '^vivid ' /proc/modules || rmmod vivid 2>/tmp/rmmod.err; then pass "$label: rmmod vivid once the kiosk is gone"
  else fail "$label: rmmod vivid after the kiosk ended: $(cat /tmp/rmmod.err)"; fi

  label="camera missing at start"
  kiosk_start KIOSK_FORMAT=YUYV
  kiosk_wait 10
  if [ "$KSTATUS" = 69 ] && grep -q 'event=camera_unavailable ' "$LOG"; then pass "$label: camera_unavailable, exit 69"
  else fail "$label: want camera_unavailable and exit 69, got exit $KSTATUS"; show "$LOG"; fi
}

# ---- run ---------------------------------------------------------------------------------------
load vivid n_devs=1 node_types=0x101 num_inputs=1 input_types=0x3 num_outputs=1 output_types=0x1 ||
  fail "load vivid"
load gpio-sim || fail "load gpio-sim"
info "$(/bin/kiosk --version 2>&1); modules: $(cut -d' ' -f1 /proc/modules | tr '\n' ' ')"
for group in $(echo "${VM_GROUPS:-capture,mjpg,gpio,faults}" | tr , " "); do
  t=$(vmtool ms)
  group_$group
  info "group $group: $(($(vmtool ms) - t)) ms"
done
unfeed
info "not covered yet (not in the product): kiosk doctor, kiosk snapshot, the torch, camera reopen"
echo "RESULT $PASSED passed, $FAILED failed"
[ "$FAILED" = 0 ]
