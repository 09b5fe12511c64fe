#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The checks of the arm64 VM tier, run by kiosk-vm-tests.service once systemd is up, from the
# second disk (/mnt/payload: the .deb, the frames of harness/vm/frames.py, the libcamera plugin
# cross-built from the package's copy of its source, a verdict program). As a user would: the
# package installed with apt, the service started and stopped by systemd, its settings in
# /etc/default/kiosk, its output read from the journal. One PASS/FAIL line per check, then
# "RESULT N passed, M failed"; then the machine powers off.
# VM_BREAK=NAME on the kernel command line breaks one check on purpose (the tier must then fail):
# torch (the torch line is not configured), wiegand (a wrong facility), mqtt (a wrong topic).
export PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive
P=/mnt/payload
PASSED=0 FAILED=0
pass() { echo "PASS $*"; PASSED=$((PASSED + 1)); }
fail() { echo "FAIL $*"; FAILED=$((FAILED + 1)); }
info() { echo "INFO $*"; }
show() { sed 's/^/INFO   | /' "$@"; }
ms() { date +%s%3N; }
BREAK=$(sed -n 's/.*VM_BREAK=\([a-z,]*\).*/\1/p' /proc/cmdline)
broken() { case ",$BREAK," in *",$1,"*) return 0 ;; esac; return 1; }
finish() {
  echo "RESULT $PASSED passed, $FAILED failed"
  sync
  systemctl poweroff --no-block -ff 2>/dev/null || echo o >/proc/sysrq-trigger
  exit 0
}
echo   # systemd's reset of the console leaves an escape sequence: let it end its own line
info "guest up: $(uname -r) $(uname -m), systemd $(systemctl --version | head -1 | cut -d' ' -f2), $(cut -d' ' -f1 /proc/uptime) s after boot"

# ---- the journal: the kiosk's lines since a cursor ------------------------------------------------
CURSOR=
mark() { CURSOR=$(journalctl -n 1 --show-cursor -q -o cat 2>/dev/null | sed -n 's/^-- cursor: //p'); }
jlog() {  # the kiosk unit's messages since the mark
  if [ -n "$CURSOR" ]; then journalctl -q -o cat -u kiosk --after-cursor="$CURSOR"; else journalctl -q -o cat -u kiosk; fi
}
# wait_journal PATTERN SECONDS: until an egrep PATTERN is among the kiosk's lines since the mark.
wait_journal() {
  n=$(($2 * 5))
  while [ $n -gt 0 ]; do jlog | grep -qE "$1" && return 0; sleep 0.2; n=$((n - 1)); done
  return 1
}
# wait_value FILE VALUE SECONDS: until FILE reads VALUE; WAITED_MS.
wait_value() {
  t0=$(ms) end=$(($(ms) + $3 * 1000))
  while [ "$(ms)" -lt $end ]; do
    [ "$(cat "$1")" = "$2" ] && { WAITED_MS=$(($(ms) - t0)); return 0; }
    sleep 0.02
  done
  return 1
}
# wait_active SECONDS: until systemd says the kiosk is active (Type=notify: READY=1 came).
wait_active() {
  n=$(($1 * 5))
  while [ $n -gt 0 ]; do [ "$(systemctl is-active kiosk)" = active ] && return 0; sleep 0.2; n=$((n - 1)); done
  return 1
}

# ---- the drivers --------------------------------------------------------------------------------
modprobe vivid n_devs=1 node_types=0x101 num_inputs=1 input_types=0x3 num_outputs=1 output_types=0x1 || fail "modprobe vivid"
modprobe gpio-sim || fail "modprobe gpio-sim (built out of tree)"
modprobe vimc || fail "modprobe vimc (built out of tree, with vimc-inject.patch)"
udevadm settle
info "modules: $(cut -d' ' -f1 /proc/modules | grep -E 'vivid|gpio_sim|irq_sim|vimc' | tr '\n' ' ')"

# vivid: an HDMI output looped into an HDMI capture (as in harness/vm/guest-tests.sh).
CAP=/dev/video0 OUT=/dev/video1 FEEDPID=
dv_index() {
  v4l2-ctl -d $CAP --list-dv-timings | awk -v w="$1" -v h="$2" '
    /Index:/ { i = $2 } /Active width:/ { aw = $3 } /Active height:/ { ah = $3 }
    /Frame format: progressive/ && aw == w && ah == h && !done { print i; done = 1 }'
}
unfeed() { [ -n "$FEEDPID" ] && { kill "$FEEDPID" 2>/dev/null; wait "$FEEDPID" 2>/dev/null; }; FEEDPID=; }
feed_out() {
  unfeed
  v4l2-ctl -d $OUT --stream-out-mmap --stream-from="$P/frames/$1.raw" --stream-loop >/dev/null 2>/tmp/feed.err &
  FEEDPID=$!
  sleep 0.5
  kill -0 "$FEEDPID" 2>/dev/null || { show /tmp/feed.err; return 1; }
}
feed() {  # feed NAME FOURCC W H
  idx=$(dv_index "$3" "$4")
  [ -n "$idx" ] || return 1
  v4l2-ctl -d $CAP --set-dv-bt-timings index="$idx" >/dev/null &&
  v4l2-ctl -d $OUT --set-dv-bt-timings index="$idx" >/dev/null &&
  v4l2-ctl -d $CAP --set-fmt-video=width="$3",height="$4",pixelformat="$2" &&
  v4l2-ctl -d $OUT --set-fmt-video-out=width="$3",height="$4",pixelformat="$2" || return 1
  # The loop: 6.12's vivid has a menu per HDMI input, "HDMI 000-0 Is Connected To" (the test
  # pattern, none, or an output), where 6.1's had loop_video=1.
  ctl=$(v4l2-ctl -d $CAP -L | awk '/is_connected_to/ { print $1; exit }')
  val=$(v4l2-ctl -d $CAP -L | awk '/is_connected_to/ { f = 1; next } f && /Output/ { sub(":", "", $1); print $1; exit } f && !/^[ \t]+[0-9]+:/ { f = 0 }')
  if [ -n "$ctl" ] && [ -n "$val" ]; then v4l2-ctl -d $CAP -c "$ctl=$val" || return 1
  else v4l2-ctl -d $CAP -c loop_video=1 || { v4l2-ctl -d $CAP -L | show; return 1; }; fi
  v4l2-ctl -d $CAP -c osd_text_mode=2 2>/dev/null
  feed_out "$1"
}

# gpio-sim: one chip "kiosk-sim", 8 lines: Wiegand D0 0 and D1 1, buzzer 3, torch 5, strike 6.
SIM=/sys/kernel/config/gpio-sim/kiosk
D0=0 D1=1 BUZZ=3 TORCH=5 STRIKE=6
mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
mkdir $SIM $SIM/bank0 && echo 8 >$SIM/bank0/num_lines && echo kiosk-sim >$SIM/bank0/label
for l in $D0:d0 $D1:d1 $BUZZ:buzzer $TORCH:torch $STRIKE:strike; do
  mkdir $SIM/bank0/line${l%%:*} && echo ${l#*:} >$SIM/bank0/line${l%%:*}/name
done
echo 1 >$SIM/live
udevadm settle
CHIP=$(cat $SIM/bank0/chip_name)
SIMBASE=/sys/devices/platform/$(cat $SIM/dev_name)/$CHIP
echo pull-up >$SIMBASE/sim_gpio$D0/pull; echo pull-up >$SIMBASE/sim_gpio$D1/pull   # Wiegand idles high
info "gpio-sim $CHIP: $(ls -l /dev/$CHIP | awk '{ print $1, $3, $4 }')"
line_info() { gpioinfo -c "$CHIP" | grep -E "line +$1:"; }
line_unused() { ! line_info "$1" | grep -q 'consumer='; }
line_held() { line_info "$1" | grep -q 'output.*consumer="kiosk"'; }

# The gpio_value tracepoint: every level the kernel drives, with its time (as harness/vm does it:
# gpio-sim's sysfs value is far too slow for 100 us pulses).
TRACE=/sys/kernel/tracing
trace_on() {
  [ -d $TRACE/events ] || mount -t tracefs nodev $TRACE 2>/dev/null
  [ -d $TRACE/events/gpio/gpio_value ] || return 1
  echo 0 >$TRACE/tracing_on; echo 4096 >$TRACE/buffer_size_kb; : >$TRACE/trace
  echo 1 >$TRACE/events/gpio/gpio_value/enable && echo 1 >$TRACE/tracing_on
}
trace_off() {  # trace_off FILE: "OFFSET VALUE TIME" per set, the chip's lines
  echo 0 >$TRACE/tracing_on; echo 0 >$TRACE/events/gpio/gpio_value/enable
  base=$(for c in /sys/class/gpio/gpiochip*; do [ "$(cat $c/label)" = kiosk-sim ] && cat $c/base; done | head -1)
  awk -v base="${base:-0}" '/gpio_value:/ && / set / { for (i = 1; i <= NF; i++) if ($i == "set") print $(i - 1) - base, $(i + 1), $(i - 3) }' \
    $TRACE/trace >"$1"
}

# ---- 13. setup by a signed code (harness/vm-arm64/setup.sh): after the reboots it asks for, only its stages
[ -f $P/setup/setup.sh ] && . $P/setup/setup.sh

# ---- 1. the package, installed with apt from a local folder ----------------------------------------
feed card-GREY-640x480 GREY 640 480 || fail "vivid: could not feed the card frames"
rm -f /etc/udev/rules.d/60-gpiochip.rules && udevadm control --reload
mkdir -p /tmp/debs && cp $P/kiosk_*_arm64.deb /tmp/debs/
deb=$(ls /tmp/debs/kiosk_*_arm64.deb)
t0=$(ms)
if apt-get install -y -q "$deb" >/tmp/apt.txt 2>&1 && [ "$(dpkg-query -W -f='${Status}' kiosk)" = "install ok installed" ]; then
  pass "apt install ./$(basename "$deb"): installed in $(($(ms) - t0)) ms, no network, $(dpkg-query -W -f='${Version}' kiosk), enabled: $(systemctl is-enabled kiosk)"
else
  fail "apt install ./$(basename "$deb") failed"; show /tmp/apt.txt; finish
fi

# GPIO permissions as a user of plain Debian sets them up (docs/installing.md, "GPIO permissions"): after the
# package (which makes the gpio group), the udev rule, then udevadm trigger. (The image has the
# rule from its first boot, before the group existed: it is taken out before the install.)
echo 'SUBSYSTEM=="gpio", KERNEL=="gpiochip*", GROUP="gpio", MODE="0660"' >/etc/udev/rules.d/60-gpiochip.rules
udevadm trigger -s gpio && udevadm settle
if [ "$(stat -c %G /dev/$CHIP)" = gpio ]; then
  pass "GPIO permissions as docs/installing.md says for plain Debian: 60-gpiochip.rules, then udevadm trigger -s gpio: $(ls -l /dev/$CHIP | awk '{ print $1, $3, $4 }')"
else
  fail "GPIO permissions: /dev/$CHIP is $(ls -l /dev/$CHIP | awk '{ print $1, $3, $4 }') after 60-gpiochip.rules and udevadm trigger -s gpio (gpio group: $(getent group gpio))"
  systemctl restart systemd-udevd; udevadm trigger -s gpio; udevadm settle
  info "after restarting udevd: $(ls -l /dev/$CHIP | awk '{ print $1, $3, $4 }')"
fi

# ---- 2. ready: the postinst started it on the default settings (vivid's /dev/video0) ---------------------
if wait_active 60; then
  pass "ready (Type=$(systemctl show -p Type --value kiosk)): systemd says $(systemctl show -p ActiveState --value kiosk)/$(systemctl show -p SubState --value kiosk) after the postinst's start; journal: $(jlog | grep -o 'event=ready .*' | head -1 | cut -c1-100)"
else
  fail "ready: the kiosk did not become active within 60 s of its install"; systemctl status kiosk --no-pager | show; jlog | tail -20 | show
fi

# ---- 3. settings, then a restart: a QR code (a card number) through vivid, reported once, Wiegand, MQTT ----
cp /usr/share/kiosk/mqtt.conf /tmp/mqtt.conf
mkdir -p /etc/systemd/system/kiosk.service.d && cp /usr/share/kiosk/mqtt.conf /etc/systemd/system/kiosk.service.d/mqtt.conf
systemctl daemon-reload
FACILITY=18; broken wiegand && FACILITY=19
TOPIC=kiosk/kiosk-vm; broken mqtt && TOPIC=kiosk/elsewhere
cat >/etc/default/kiosk <<EOF
KIOSK_FORMAT=GREY
KIOSK_GPIO_CHIP=kiosk-sim
KIOSK_BUZZER_LINE=$BUZZ
KIOSK_WIEGAND_D0_LINE=$D0
KIOSK_WIEGAND_D1_LINE=$D1
KIOSK_WIEGAND_ACTIVE_LOW=1
KIOSK_WIEGAND_FACILITY=$FACILITY
KIOSK_WIEGAND_PULSE_US=100
KIOSK_WIEGAND_INTERVAL_US=2000
KIOSK_MQTT_URL=mqtt://127.0.0.1:1883
EOF
broken torch || echo "KIOSK_TORCH_LINE=$TORCH" >>/etc/default/kiosk
echo "KIOSK_TORCH_HOLD_MS=2000" >>/etc/default/kiosk
systemctl is-active -q mosquitto || systemctl start mosquitto
timeout 60 mosquitto_sub -h 127.0.0.1 -t "$TOPIC/scan" -C 1 -W 60 >/tmp/mqtt-scan.txt 2>&1 &
subpid=$!
sleep 1
trace_on || fail "no gpio_value tracepoint in this kernel"
mark
systemctl reset-failed kiosk 2>/dev/null
systemctl restart kiosk
if wait_journal 'event=scan ' 40; then
  sleep 3   # the card stays in view: more frames of the same code, still one report
  scans=$(jlog | grep -c 'event=scan ')
  if [ "$scans" = 1 ] && jlog | grep -qE 'event=scan symbology="?QR-Code"? data="?36963"?( |$)'; then
    pass "a QR code through vivid reported once in 3 s of frames: $(jlog | grep -o 'event=scan .*' | cut -c1-90)"
  else fail "want one scan of QR-Code 36963, got $scans"; jlog | tail -20 | show; fi
else
  fail "no scan within 40 s of the restart"; systemctl status kiosk --no-pager | show; jlog | tail -20 | show
fi
trace_off /tmp/wiegand.trace
w=$(jlog | grep -o 'event=wiegand .*' | head -1)
CARD_BITS=00001001010010000011000111   # H10301, facility 18, card 36963
n0=$(awk -v l=$D0 '$1 == l && $2 == 0' /tmp/wiegand.trace | wc -l) n1=$(awk -v l=$D1 '$1 == l && $2 == 0' /tmp/wiegand.trace | wc -l)
bits=$(awk -v a=$D0 -v b=$D1 '$2 == 0 && $1 == a { printf "0" } $2 == 0 && $1 == b { printf "1" }' /tmp/wiegand.trace)
if echo "$w" | grep -q 'bits=26 facility=18 card=36963' && [ "$n0" = 17 ] && [ "$n1" = 9 ] && [ "$bits" = $CARD_BITS ]; then
  pass "Wiegand counted edge by edge (gpio_value tracepoint): D0 low 17 times, D1 9 times, in the order of $CARD_BITS; $w"
else fail "Wiegand: want 17 pulses on D0 and 9 on D1 spelling $CARD_BITS and a wiegand line, got $n0 and $n1: $bits; ${w:-no wiegand line}"; show /tmp/wiegand.trace; fi
wait $subpid
if grep -q '"data":"36963"' /tmp/mqtt-scan.txt; then
  pass "MQTT: the kiosk's client to the guest's Mosquitto: $TOPIC/scan got $(cut -c1-110 /tmp/mqtt-scan.txt)"
else fail "MQTT: no scan message on $TOPIC/scan within 60 s: $(cat /tmp/mqtt-scan.txt)"; jlog | grep -i mqtt | show; fi

# ---- 4. the torch on a dark scene ------------------------------------------------------------------
feed_out dark-GREY-640x480
if wait_value $SIMBASE/sim_gpio$TORCH/value 1 15; then
  pass "torch: dark frames (luma 20), line $TORCH of gpio-sim active $WAITED_MS ms later: $(jlog | grep -o 'event=torch state=on .*' | head -1 | cut -c1-80)"
else fail "torch: line $TORCH not active within 15 s of dark frames"; jlog | tail -10 | show; fi

# ---- 5. SIGKILL, then systemd's restart ------------------------------------------------------------------
pid=$(systemctl show -p MainPID --value kiosk) restarts=$(systemctl show -p NRestarts --value kiosk)
mark
systemctl kill -s KILL kiosk
t0=$(ms)
sleep 1
n=150; while [ $n -gt 0 ]; do
  new=$(systemctl show -p MainPID --value kiosk)
  [ "$(systemctl is-active kiosk)" = active ] && [ "$new" != 0 ] && [ "$new" != "$pid" ] && break
  sleep 0.2; n=$((n - 1))
done
if [ $n -gt 0 ] && [ "$(systemctl show -p NRestarts --value kiosk)" = $((restarts + 1)) ]; then
  pass "SIGKILL: systemd restarted it (RestartSec=5s): pid $pid -> $new, NRestarts $((restarts + 1)), active again $(($(ms) - t0)) ms after the kill"
else fail "SIGKILL: not active again with a new pid within 30 s ($(systemctl is-active kiosk), NRestarts $(systemctl show -p NRestarts --value kiosk))"; systemctl status kiosk --no-pager | show; fi

# ---- 6. systemctl stop: every line released ----------------------------------------------------------------
held=$(for l in $D0 $D1 $BUZZ $TORCH; do line_held $l && echo $l; done | tr '\n' ' ')
t0=$(ms)
systemctl stop kiosk
stop_ms=$(($(ms) - t0))
free=1; for l in $D0 $D1 $BUZZ $TORCH $STRIKE; do line_unused $l || free=0; done
if [ "$held" = "$D0 $D1 $BUZZ $TORCH " ] && [ $free = 1 ] && [ "$(cat $SIMBASE/sim_gpio$TORCH/value)" = 0 ] && [ "$(cat $SIMBASE/sim_gpio$D0/value)" = 1 ]; then
  pass "systemctl stop in $stop_ms ms: lines $held held by kiosk before, all released after, torch off, Wiegand idle high"
else fail "systemctl stop: lines held before: '$held'; after: $(gpioinfo -c "$CHIP" | grep consumer= | tr -s ' \t' ' ')"; fi

# ---- 7. kiosk doctor, all PASS (as the kiosk user, on the service's settings) ---------------------------------
feed_out card-GREY-640x480
runuser -u kiosk -- env -i PATH=/usr/bin:/bin $(grep -v '^#' /etc/default/kiosk | grep =) /usr/bin/kiosk doctor >/tmp/doctor.txt 2>&1
st=$?
if [ $st = 0 ] && ! grep -q '^FAIL' /tmp/doctor.txt && grep -q '^PASS camera:' /tmp/doctor.txt && grep -q '^PASS mqtt' /tmp/doctor.txt; then
  pass "kiosk doctor as the kiosk user: exit 0, $(grep -c '^PASS' /tmp/doctor.txt) PASS, $(grep -c '^WARN' /tmp/doctor.txt) WARN, no FAIL"
else fail "kiosk doctor: exit $st"; show /tmp/doctor.txt; fi
sed 's/^/INFO doctor | /' /tmp/doctor.txt

# ---- 8. the strike on a grant (KIOSK_VERDICT=hook) ----------------------------------------------------------------
cp $P/allow /usr/local/bin/kiosk-allow && chmod 755 /usr/local/bin/kiosk-allow
cat >/etc/default/kiosk <<EOF
KIOSK_FORMAT=GREY
KIOSK_GPIO_CHIP=kiosk-sim
KIOSK_VERDICT=hook
KIOSK_ON_SCAN=/usr/local/bin/kiosk-allow
KIOSK_DOOR_LINE=$STRIKE
KIOSK_DOOR_MS=1000
EOF
rm -f /etc/systemd/system/kiosk.service.d/mqtt.conf; systemctl daemon-reload
trace_on
mark
systemctl reset-failed kiosk 2>/dev/null
systemctl start kiosk
if wait_journal 'event=door state=closed' 40; then
  if jlog | grep -q 'event=verdict result=granted' && jlog | grep -q 'event=door state=open'; then
    pass "strike: verdict granted by the hook, door open, closed by time: $(jlog | grep -o 'event=verdict result=granted .*' | head -1 | cut -c1-70)"
  else fail "strike: want verdict granted and door open"; jlog | tail -20 | show; fi
else fail "strike: no door state=closed within 40 s"; jlog | tail -20 | show; fi
systemctl stop kiosk
trace_off /tmp/strike.trace
levels=$(awk -v l=$STRIKE '$1 == l { printf "%s", $2 }' /tmp/strike.trace)
open_ms=$(awk -v l=$STRIKE '$1 == l { t = $3; sub(":", "", t); t *= 1000 } $1 == l && $2 == 1 { s = t } $1 == l && $2 == 0 && s { printf "%d", t - s; s = 0 }' /tmp/strike.trace)
if [ "$levels" = 010 ] && [ -n "$open_ms" ] && [ "$open_ms" -ge 950 ] && [ "$open_ms" -le 1500 ] && line_unused $STRIKE; then
  pass "strike: line $STRIKE driven 0, 1 for $open_ms ms (KIOSK_DOOR_MS=1000), 0; released after stop"
else fail "strike: want levels 010 with about 1000 ms open, got ${levels:-none}, ${open_ms:-?} ms"; show /tmp/strike.trace; fi

# ---- 9. libcamera: the plugin built for arm64 from the package's source, a code injected through vimc ---------
install -D -m 0644 $P/kiosk-libcamera.so /usr/local/lib/kiosk/kiosk-libcamera.so
echo 0 >/sys/module/vimc/parameters/stall 2>/dev/null
cat >/etc/default/kiosk <<EOF
KIOSK_CAMERA=libcamera
EOF
mark
systemctl reset-failed kiosk 2>/dev/null
systemctl start kiosk
if wait_active 60; then
  # The frame injected at vimc's capture is raw BGR888 of the size libcamera asked for.
  lcsize=$(jlog | grep -o 'event=camera_open .*' | head -1 | sed -n 's/.* size=\([0-9]*x[0-9]*\).*/\1/p')
  cp "$P/frames/qr-BGR888-$lcsize.raw" /tmp/lc-qr.raw 2>/dev/null || fail "libcamera: no BGR888 frame of the size opened (${lcsize:-none})"
  echo /tmp/lc-qr.raw >/sys/module/vimc/parameters/inject
  if wait_journal 'event=scan .*KIOSK-VM-LC-0001' 30; then
    pass "libcamera: $(jlog | grep -o 'event=camera_open .*' | head -1 | cut -c1-70); $(jlog | grep -o 'event=scan .*' | head -1 | cut -c1-80)"
  else fail "libcamera: no scan of the injected KIOSK-VM-LC-0001 within 30 s"; jlog | tail -20 | show; fi
else fail "libcamera: the kiosk on KIOSK_CAMERA=libcamera never became active"; systemctl status kiosk --no-pager | show; jlog | tail -20 | show; fi
echo "" >/sys/module/vimc/parameters/inject
systemctl stop kiosk
unfeed

# ---- 11. the door speaks: credentials' verdicts said into snd-aloop, recorded at its other end ---------------------
# The installed kiosk under systemd (the audio group and DeviceAllow=char-alsa of the package's unit,
# its CacheDirectory) renders its phrases with espeak-ng at start and says each verdict's phrase on
# the ALSA loopback's playback side; arecord records the capture side (16 kHz mono) onto the third
# disk, and the host's pocketsphinx hears it (harness/vm-arm64/run.sh). Then the loopback card is
# unbound mid-run (a USB speaker pulled): speaker_error, the verdicts go on; bound again, the door
# speaks again.
SAID=/dev/vdc
# door_settings LINE...: /etc/default/kiosk for a door that judges credentials shown to the VM's
# camera (vivid's GREY frames, the whole frame its ROI, no wait for a synced clock), LINE... after.
door_settings() {
  printf '%s\n' KIOSK_FORMAT=GREY KIOSK_ROI=0,0,1,1 KIOSK_VERDICT=credentials KIOSK_TRUST_DIR=/etc/kiosk/trust \
    KIOSK_REQUIRE_SYNCED_CLOCK=0 "$@" >/etc/default/kiosk
}
if modprobe snd-aloop && udevadm settle && grep -q Loopback /proc/asound/cards; then
  mkdir -p /etc/kiosk/trust && cp $P/trust/issuer-1.pem /etc/kiosk/trust/
  door_settings KIOSK_SPEAKER=plughw:CARD=Loopback,DEV=0 KIOSK_VOICE=en-us KIOSK_SPEAK=all KIOSK_SPEAK_VOLUME=100
  # The format and the loop set once, before the kiosk holds the capture; then only the output's frame changes.
  feed bright-GREY-640x480 GREY 640 480 || fail "speech: cannot set up vivid's loop"
  arecord -q -D plughw:CARD=Loopback,DEV=1 -f S16_LE -r 16000 -c 1 -t raw /tmp/said.raw 2>/tmp/arecord.err &
  RECPID=$!
  mark
  systemctl reset-failed kiosk 2>/dev/null
  systemctl start kiosk
  if wait_journal 'event=speech_phrases' 180; then
    pass "speech: phrases ready under systemd: $(jlog | grep -o 'event=speech_phrases .*' | head -1 | cut -c1-80)"
    said=0
    for step in valid:granted expired:expired plain:not-a-credential; do
      feed_out "speech-${step%%:*}-GREY-640x480" || fail "speech: cannot stream speech-${step%%:*}"
      if wait_journal "event=spoke key=${step#*:}" 40; then said=$((said + 1)); else fail "speech: no spoke key=${step#*:} within 40 s"; jlog | tail -15 | show; fi
      feed_out bright-GREY-640x480
      sleep 4   # the phrase plays out in real time on the loopback before the next verdict cuts it
    done
    kill "$RECPID" 2>/dev/null; wait "$RECPID" 2>/dev/null
    bytes=$(stat -c %s /tmp/said.raw 2>/dev/null || echo 0)
    { printf 'SAID %s\n' "$bytes"; head -c 511 /dev/zero; } | head -c 512 >/tmp/said.head
    cat /tmp/said.head /tmp/said.raw | dd of=$SAID bs=64k conv=fsync status=none
    info "speech recorded: $bytes bytes, $said phrases said: $(jlog | grep -o 'event=spoke .*' | tr '\n' ';' | cut -c1-150)"
    # The speaker pulled out mid-run: the loopback card unbound. ALSA disconnects the card at once
    # but frees it only once every handle is closed (the kiosk keeps its PCM open between phrases),
    # so the unbind waits in the background for the kiosk to notice, as a USB speaker's pull does.
    echo snd_aloop.0 >/sys/bus/platform/drivers/snd_aloop/unbind &
    UNBIND=$!
    sleep 1
    feed_out speech-valid2-GREY-640x480
    if wait_journal 'event=verdict result=granted .*credential=bob' 40 && wait_journal 'event=speaker_error' 20; then
      pass "speech: the speaker gone (snd-aloop unbound), the verdict still given: $(jlog | grep -o 'event=speaker_error .*' | head -1 | cut -c1-100)"
    else fail "speech: with the speaker gone, want the verdict and a speaker_error"; jlog | tail -15 | show; fi
    feed_out bright-GREY-640x480
    wait "$UNBIND"
    echo snd_aloop.0 >/sys/bus/platform/drivers/snd_aloop/bind; udevadm settle
    sleep 2
    feed_out speech-plain2-GREY-640x480
    if wait_journal 'event=spoke key=not-a-credential' 40 && [ "$(jlog | grep -c 'event=spoke key=not-a-credential')" -ge 2 ]; then
      pass "speech: the speaker back (bound again), the door speaks again: $(jlog | grep -o 'event=speaker_ready .*' | head -1 | cut -c1-80)"
    else fail "speech: after the speaker came back, no phrase within 40 s"; jlog | tail -15 | show; fi
  else fail "speech: no speech_phrases within 180 s of the start"; systemctl status kiosk --no-pager | show; jlog | tail -20 | show; fi
  systemctl stop kiosk
  unfeed
  kill "$RECPID" 2>/dev/null
else fail "speech: modprobe snd-aloop gave no Loopback card"; cat /proc/asound/cards 2>&1 | show; fi

# ---- 12. a PIN at the door: a USB keypad (uinput) and a Wiegand keypad (gpio-sim): harness/vm-arm64/keypad.sh ----
. $P/keypad.sh

# ---- 10. the idle kiosk's memory on arm64: a figure for docs/measurements/size.md (issue 23), not a limit ----------------
# As harness/memory/idle-rss.sh on the host: the peak RSS of `kiosk run` with the defaults on a replay of
# 600 empty 640x480 frames, under GNU time (it forks, then execs), three runs.
mkdir -p /tmp/idle
{ printf 'P5\n640 480\n255\n'; head -c 307200 /dev/zero | tr '\0' '\200'; } >/tmp/idle/0000.pgm
for i in $(seq -w 1 599); do ln -f /tmp/idle/0000.pgm /tmp/idle/0$i.pgm; done
rss=""
for run in 1 2 3; do
  if env -i PATH=/usr/bin:/bin KIOSK_CAMERA=replay:/tmp/idle /usr/bin/time -f %M -o /tmp/idle.rss /usr/bin/kiosk run >/dev/null 2>/tmp/idle.log; then
    rss="$rss $(tail -1 /tmp/idle.rss)"
  else fail "idle RSS: kiosk run on the replay failed"; show /tmp/idle.log; break; fi
done
[ -n "$rss" ] && info "idle RSS on arm64 (kiosk run, the defaults, 600 empty frames; kB, 3 runs):$rss"
# ---- 13. setup by a signed code: the door made new, then the reboots of harness/vm-arm64/setup.sh
[ -f $P/setup/setup.sh ] && setup_prepare
finish
