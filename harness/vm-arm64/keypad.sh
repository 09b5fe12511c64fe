# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=sh
# ---- 12. a PIN at the door (issue 54): a USB keypad (uinput) and a Wiegand keypad (gpio-sim) --------
# Sourced by harness/vm-arm64/guest.sh (its helpers: pass, fail, info, jlog, mark, feed, trace_on...).
# The installed kiosk under systemd, KIOSK_VERDICT=credentials, the pins file that
# deploy/examples/issue-credential wrote on the host (alice and carol listed, bob not), the codes
# shown through vivid. First a USB keypad made with uinput by harness/vm-arm64/keypad.py (Debian's
# python3-evdev): right PIN, no PIN needed, wrong PIN, none, the duress code (same lines, beeps and
# verdict as the PIN; its alarm at the guest's Mosquitto), the grab, five wrong PINs locking alice
# across a restart, unplugged and plugged back. Then a Wiegand keypad on two gpio-sim lines driven by
# harness/vm-arm64/keypad.c (8-bit and 4-bit key bursts at a real keypad's timing, as the kernel's
# irq tracepoint records them). Last: no digit of a PIN in the journal, on the broker or in the
# kiosk's folders. The PINs are the tier's own (the pins file's hashes were made from them).
KP_PIN=58203914 KP_DURESS=58203915 KP_WRONG=96385274 KP_CAROL=730461
KP_D0=2 KP_D1=4 KP_WINDOW=15
KP_FRAME=bright-GREY-640x480
kp_start=$(ms)
TRACE=${TRACE:-/sys/kernel/tracing}

# kp_count PATTERN: the kiosk's lines since the mark matching it.
kp_count() { jlog | grep -cE "$1"; }
# kp_wait PATTERN N SECONDS: until N lines match.
kp_wait() {
  n=$(($3 * 4))
  while [ $n -gt 0 ]; do [ "$(kp_count "$1")" -ge "$2" ] && return 0; sleep 0.25; n=$((n - 1)); done
  return 1
}
# kp CMD...: a command to keypad.py; its answer in KP_ANSWER.
kp() {
  kp_n=$(($(wc -l </tmp/kp.out) + 1))
  echo "$*" >&7
  n=100; while [ $n -gt 0 ] && [ "$(wc -l </tmp/kp.out)" -lt $kp_n ]; do sleep 0.2; n=$((n - 1)); done
  KP_ANSWER=$(sed -n "${kp_n}p" /tmp/kp.out)
}
# kp_settings KEYPAD: the door's settings with that keypad.
kp_settings() {
  door_settings KIOSK_GPIO_CHIP=kiosk-sim "KIOSK_BUZZER_LINE=$BUZZ" "KIOSK_DOOR_LINE=$STRIKE" KIOSK_DOOR_MS=1000 \
    "KIOSK_KEYPAD=$1" "KIOSK_PIN_WINDOW_S=$KP_WINDOW" KIOSK_REPEAT_MS=1000 KIOSK_MQTT_URL=mqtt://127.0.0.1:1883 KIOSK_LOG_LEVEL=debug
}
# kp_ask FRAME VERDICTS [TYPE...]: the code shown until the door asks for its PIN (two short
# beeps, `beep for=pin`), then taken away and TYPE done (a function and its arguments); true when
# the kiosk's VERDICTS-th verdict came. Without TYPE the code is shown, and no keys follow.
KP_PROMPTS=0
kp_ask() {
  kp_frame=$1 kp_verdicts=$2; shift 2
  feed_out "$kp_frame" || { fail "keypad: cannot stream $kp_frame"; return 1; }
  if [ $# -gt 0 ]; then
    KP_PROMPTS=$((KP_PROMPTS + 1))
    kp_wait 'event=beep .*for=pin' $KP_PROMPTS 40 || { feed_out $KP_FRAME; info "keypad: no PIN prompt for $kp_frame within 40 s"; return 1; }
    feed_out $KP_FRAME
    "$@"
  fi
  kp_wait 'event=verdict ' "$kp_verdicts" $((KP_WINDOW + 40)); st=$?
  feed_out $KP_FRAME
  sleep 1.5   # out of view longer than KIOSK_REPEAT_MS before the same code comes again
  return $st
}
kp_type() { kp type "$1" "$2"; }               # kp_type pad|row KEYS (USB)
kp_none() { :; }                               # a PIN asked for, none typed
kp_verdict() { jlog | grep -o 'event=verdict .*' | sed -n "${1}p"; }
kp_reason() { kp_verdict "$1" | sed -n 's/.*result=\([a-z]*\) reason=\("[^"]*"\|[^ ]*\).*/\1:\2/p' | tr -d '"'; }
# kp_levels FILE LINE: a line's levels in the gpio_value trace, and each step's length in ms
# (steps over 500 ms, the time a hand takes to type, as "-").
kp_levels() {
  awk -v l="$2" '$1 == l { t = $3; sub(":", "", t); t *= 1000
    if (n++) { d = t - last; printf(" %s", (d > 500 && lv == 0) ? "-" : sprintf("%d", d)) }
    printf " %s", $2; last = t; lv = $2 } END { print "" }' "$1"
}
# kp_same A B: two kp_levels strings alike: the same levels, each step within 150 ms of the other's
# (the emulated machine's threads are late by tens of ms on a busy host; the patterns' own steps,
# 60 ms and 400 ms, are in the kiosk's beep events, compared exactly).
kp_same() {
  awk -v a="$1" -v b="$2" 'BEGIN { n = split(a, x, " "); if (n != split(b, y, " ")) exit 1
    for (i = 1; i <= n; i++) { if (x[i] == y[i]) continue; if (x[i] == "-" || y[i] == "-") exit 1
      d = x[i] - y[i]; if (d < -150 || d > 150) exit 1 }; exit 0 }'
}
# kp_beeps FROM: the kiosk's beep events after the FROM-th, their pattern and what for.
kp_beeps() { jlog | grep -o 'event=beep .*' | sed -n "$(($1 + 1)),\$p" | sed 's/event=beep ms=[0-9]* //' | tr '\n' ';'; }
kp_show() { jlog | grep -vE 'event=(stats|gpio) ' | tail -"${1:-15}" | show; }

systemctl stop kiosk   # (stopped already after the groups before: vivid's format is set while no one holds the capture)
modprobe uinput || fail "keypad: modprobe uinput"
modprobe evdev 2>/dev/null   # built in on Debian's arm64 kernel, or a module
mkdir -p /etc/kiosk/trust && cp $P/trust/issuer-1.pem /etc/kiosk/trust/
install -m 0640 -o root -g kiosk $P/pins /etc/kiosk/pins || fail "keypad: cannot install the pins file"
mkdir -p /etc/systemd/system/kiosk.service.d && cp /usr/share/kiosk/mqtt.conf /etc/systemd/system/kiosk.service.d/mqtt.conf
systemctl daemon-reload
systemctl is-active -q mosquitto || systemctl start mosquitto
timeout 900 mosquitto_sub -h 127.0.0.1 -q 1 -v -t 'kiosk/#' -t 'homeassistant/#' >/tmp/kp-mqtt.txt 2>&1 &
KP_SUB=$!
feed $KP_FRAME GREY 640 480 || fail "keypad: cannot set up vivid's loop"
rm -f /tmp/kp.in /tmp/kp.out && mkfifo /tmp/kp.in && : >/tmp/kp.out
python3 $P/keypad.py </tmp/kp.in >>/tmp/kp.out 2>/tmp/kp.err &
KP_PY=$!
exec 7>/tmp/kp.in
kp plug
KP_EVENT=${KP_ANSWER#plugged }
case $KP_EVENT in
  /dev/input/event*) info "keypad: uinput made $KP_EVENT, $(ls -l "$KP_EVENT" | awk '{ print $1, $3, $4 }'), by-id: $(ls /dev/input/by-id 2>/dev/null | tr '\n' ' ')" ;;
  *) fail "keypad: keypad.py made no device: $KP_ANSWER"; show /tmp/kp.err ;;
esac

# ---- the USB keypad ----------------------------------------------------------------------------------
kp_settings "evdev:$KP_EVENT"
mark
systemctl reset-failed kiosk 2>/dev/null
systemctl start kiosk
if wait_active 60 && kp_wait 'event=keypad state=ready' 1 30; then
  pass "keypad: the kiosk under systemd (User=kiosk, SupplementaryGroups=input, DeviceAllow=char-input r) opened and grabbed the uinput keypad: $(jlog | grep -o 'event=keypad .*' | head -1 | cut -c1-100); $(jlog | grep -o 'event=pins .*' | head -1 | cut -c1-90)"
else
  fail "keypad: no keypad state=ready within 30 s of the start"; systemctl status kiosk --no-pager | show; kp_show 20
fi

# The right PIN (number row, its 8th digit ends it): granted, the strike and the beeps traced.
trace_on
b0=$(kp_count 'event=beep ')
if kp_ask pin-alice-GREY-640x480 1 kp_type row "$KP_PIN" && kp_wait 'event=door state=closed' 1 20; then :; fi
trace_off /tmp/kp-pin.trace
beeps_pin=$(kp_beeps $b0)
if [ "$(kp_reason 1)" = granted:valid ] && jlog | grep -q 'event=pin result=ok credential=alice' \
   && [ "$(kp_levels /tmp/kp-pin.trace $STRIKE)" != "" ] && kp_levels /tmp/kp-pin.trace $STRIKE | grep -qE '^ 1 (9[5-9][0-9]|1[0-4][0-9][0-9]) 0$'; then
  pass "keypad: the right PIN on the USB keypad: $(kp_verdict 1 | cut -c1-90); strike line $STRIKE:$(kp_levels /tmp/kp-pin.trace $STRIKE) (levels, ms between)"
else fail "keypad: the right PIN: want granted, pin ok and the strike open about 1000 ms; got '$(kp_verdict 1)', strike:$(kp_levels /tmp/kp-pin.trace $STRIKE)"; kp_show; fi

# bob is not in the pins file: he opens with no PIN asked.
kp_ask pin-bob-GREY-640x480 2
if [ "$(kp_reason 2)" = granted:valid ] && [ "$(kp_count 'event=beep .*for=pin')" = 1 ]; then
  pass "keypad: a subject the pins file does not list opens with no PIN asked: $(kp_verdict 2 | cut -c1-90)"
else fail "keypad: bob: want granted with no PIN prompt; got '$(kp_verdict 2)', $(kp_count 'event=beep .*for=pin') prompts"; kp_show; fi

# A wrong PIN on the numeric pad, after two digits cleared with * (Esc).
kp_ask pin-alice-GREY-640x480 3 kp_type pad "12*$KP_WRONG"
if [ "$(kp_reason 3)" = "denied:wrong pin" ] && [ "$(kp_count 'event=pin result=wrong')" = 1 ]; then
  pass "keypad: a wrong PIN (after * cleared two digits): $(kp_verdict 3 | cut -c1-90)"
else fail "keypad: want denied wrong pin; got '$(kp_verdict 3)'"; kp_show; fi

# No PIN: the window (KIOSK_PIN_WINDOW_S) ends.
t0=$(ms)
kp_ask pin-alice-GREY-640x480 4 kp_none
if [ "$(kp_reason 4)" = "denied:pin required" ] && [ "$(kp_count 'event=pin result=timeout')" = 1 ]; then
  pass "keypad: no PIN within KIOSK_PIN_WINDOW_S=$KP_WINDOW: $(kp_verdict 4 | cut -c1-90) ($(($(ms) - t0)) ms from the code)"
else fail "keypad: no PIN: want denied pin required; got '$(kp_verdict 4)'"; kp_show; fi

# The duress code (plus1: the last digit plus one) on the numeric pad, # ending it: it opens as the
# PIN did (the same verdict line but its ms and frame, the same beeps and strike), and the alarm.
trace_on
b0=$(kp_count 'event=beep ')
if kp_ask pin-alice-GREY-640x480 5 kp_type pad "$KP_DURESS#" && kp_wait 'event=door state=closed' 2 20; then :; fi
trace_off /tmp/kp-duress.trace
beeps_duress=$(kp_beeps $b0)
sleep 2   # the alarm's QoS 1 publish
strip() { sed 's/ ms=[^ ]*//; s/ frame=[^ ]*//'; }
pin_line=$(kp_verdict 1 | strip) duress_line=$(kp_verdict 5 | strip)
buzz_pin=$(kp_levels /tmp/kp-pin.trace $BUZZ) buzz_duress=$(kp_levels /tmp/kp-duress.trace $BUZZ)
strike_pin=$(kp_levels /tmp/kp-pin.trace $STRIKE) strike_duress=$(kp_levels /tmp/kp-duress.trace $STRIKE)
alarm=$(grep '^kiosk/kiosk-vm/alarm ' /tmp/kp-mqtt.txt | head -1)
if [ -n "$pin_line" ] && [ "$pin_line" = "$duress_line" ] && [ "$(kp_count 'event=pin result=ok')" = 2 ] \
   && [ -n "$beeps_pin" ] && [ "$beeps_pin" = "$beeps_duress" ] && [ -n "$buzz_pin" ] && kp_same "$buzz_pin" "$buzz_duress" \
   && [ -n "$strike_pin" ] && kp_same "$strike_pin" "$strike_duress"; then
  pass "keypad: the duress code opens as the PIN does: the same verdict line ($duress_line), the same beeps ($beeps_duress), buzzer line $BUZZ$buzz_duress against$buzz_pin, strike$strike_duress against$strike_pin (levels, ms between)"
else fail "keypad: the duress code at the door: verdicts '$pin_line' / '$duress_line'; beeps $beeps_pin / $beeps_duress; buzzer$buzz_pin /$buzz_duress; strike$strike_pin /$strike_duress"; show /tmp/kp-duress.trace; kp_show; fi
# (interface.md 0.6: {"type":"duress","subject":"alice","time":"...Z"}; a key for Home Assistant may join them.)
if jlog | grep -q 'event=duress .*credential=alice' && echo "$alarm" | grep -q '"type":"duress"' \
   && echo "$alarm" | grep -q '"subject":"alice"' && echo "$alarm" | grep -qE '"time":"[0-9T:.-]+Z"'; then
  pass "keypad: the duress alarm: $(jlog | grep -o 'event=duress .*' | head -1 | cut -c1-70); mosquitto_sub (QoS 1) got $alarm"
else fail "keypad: the duress alarm: journal '$(jlog | grep -o 'event=duress .*' | head -1)', MQTT '${alarm:-nothing on kiosk/kiosk-vm/alarm}'"; grep -v '^homeassistant/' /tmp/kp-mqtt.txt | tail -5 | show; fi

# The grab: another program can neither grab the keypad nor read its keys while the kiosk runs.
kp grabbed
if [ "$KP_ANSWER" = "grabbed EBUSY read 0" ]; then
  pass "keypad: grabbed by the kiosk: another program's EVIOCGRAB fails with EBUSY and it reads none of a key's events"
else fail "keypad: the grab: want 'grabbed EBUSY read 0', got '$KP_ANSWER'"; fi

# Four more wrong PINs (five in all, the first above): alice is locked, and stays locked across a restart.
for i in 6 7 8 9; do kp_ask pin-alice-GREY-640x480 $i kp_type row "$KP_WRONG" || info "keypad: no verdict $i"; done
kp_ask pin-alice-GREY-640x480 10
locked_before=$(kp_reason 10) wrongs=$(kp_count 'event=pin result=wrong') pin_locked=$(jlog | grep -o 'event=pin_locked .*' | head -1)
systemctl restart kiosk
t0=$(ms)
if wait_active 60 && kp_wait 'event=keypad state=ready' 2 30; then :; else info "keypad: no keypad ready after the restart"; fi
kp_ask pin-alice-GREY-640x480 11
if [ "$wrongs" = 5 ] && [ -n "$pin_locked" ] && [ "$locked_before" = "denied:pin locked" ] && [ "$(kp_reason 11)" = "denied:pin locked" ]; then
  pass "keypad: five wrong PINs lock alice ($(echo "$pin_locked" | cut -c1-60)): denied pin locked, and after systemctl restart again: $(kp_verdict 11 | cut -c1-80)"
else fail "keypad: the lockout: $wrongs wrong, '$pin_locked', before the restart '$locked_before', after '$(kp_reason 11)'"; kp_show; fi

# Unplugged and plugged back: lost, then ready again; carol's PIN (# ending it) on it opens.
lost=$(kp_count 'event=keypad state=lost') ready=$(kp_count 'event=keypad state=ready')
kp unplug
kp_wait 'event=keypad state=lost' $((lost + 1)) 20; lost=$?
kp plug
if [ $lost = 0 ] && [ "$KP_ANSWER" = "plugged $KP_EVENT" ] && kp_wait 'event=keypad state=ready' $((ready + 1)) 20 \
   && kp_ask pin-carol-GREY-640x480 12 kp_type row "$KP_CAROL#" && [ "$(kp_reason 12)" = granted:valid ]; then
  pass "keypad: unplugged ($(jlog | grep -o 'event=keypad state=lost.*' | tail -1 | cut -c1-70)), plugged back and found again; carol's PIN on it: $(kp_verdict 12 | cut -c1-70)"
else fail "keypad: unplug and plug: lost $lost, '$KP_ANSWER', verdict '$(kp_verdict 12)'"; kp_show; fi
systemctl stop kiosk
info "keypad: the USB keypad's part took $(( ($(ms) - kp_start) / 1000 )) s"

# ---- the Wiegand keypad --------------------------------------------------------------------------------
# Lines 2 and 4 of gpio-sim, idle high. keypad-wiegand (harness/vm-arm64/keypad.c) pulls them down
# through gpio-sim's sysfs `pull`; the kernel's irq tracepoint (the gpio-cdev edge interrupts, named
# after their consumer, "kiosk"; the kiosk asks for falls only) records each fall where the kiosk's
# time stamp is taken. A fall reaches the kiosk only once the kernel's interrupt thread has run: two
# falls before it runs are one event (gpiolib-cdev), so a bit is lost when that thread is later
# than a bit's 1-2 ms, as it is when it waits on the other vCPU, which a busy host leaves unrun for
# milliseconds (a Pi's thread is microseconds late): the thread and the writer share vCPU 0. A PIN
# that a lost bit spoiled (wrong pin, or pin required when # was lost) is typed again, at most 3
# times; each try is shown with what the kernel saw.
kp_w0=$(ms)
echo pull-up >$SIMBASE/sim_gpio$KP_D0/pull; echo pull-up >$SIMBASE/sim_gpio$KP_D1/pull
kp_settings "wiegand:$KP_D0,$KP_D1"
mark; KP_PROMPTS=0
systemctl reset-failed kiosk 2>/dev/null
systemctl start kiosk
if wait_active 60 && kp_wait 'event=keypad state=ready' 1 30 && line_info $KP_D0 | grep -qE 'input.*edges=falling.*consumer="?kiosk'; then
  pass "keypad: a Wiegand keypad on gpio-sim lines $KP_D0 and $KP_D1: $(jlog | grep -o 'event=keypad .*' | head -1 | cut -c1-60); $(line_info $KP_D0 | tr -s ' \t' ' ')"
else fail "keypad: Wiegand: no keypad ready (with its lines' falls)"; kp_show; line_info $KP_D0 | show; fi
IRQ=$TRACE/events/irq/irq_handler_entry
kp_irq_on() { echo 0 >$TRACE/tracing_on; : >$TRACE/trace; echo 'name == "kiosk"' >$IRQ/filter; echo 1 >$IRQ/enable; echo 1 >$TRACE/tracing_on; }
# kp_irq_off FILE: "IRQ TIME_US" per fall.
kp_irq_off() {
  echo 0 >$TRACE/tracing_on; echo 0 >$IRQ/enable; echo 0 >$IRQ/filter
  awk '/irq_handler_entry:/ { for (i = 1; i <= NF; i++) { if ($i ~ /^irq=/) q = substr($i, 5); if ($i ~ /^[0-9]+\.[0-9]+:$/) t = $i }
    sub(":", "", t); printf "%s %.0f\n", q, t * 1e6 }' $TRACE/trace >"$1"
}
# kp_irq_stats FILE: how many falls, and the bits' spacing (a fall to the next within a key: under
# 20 ms) in us, min/median/max, as the kernel stamped them.
kp_irq_stats() {
  awk '{ n++; if (last && $2 - last < 20000) print $2 - last; else k++; last = $2 } END { print "n", n + 0, k + 0 }' "$1" \
    | sort -n | awk '$1 == "n" { n = $2; k = $3; next } { v[++c] = $1 } END { printf " %d falls in %d bursts, bit_us %d %d %d", n, k, v[1], v[int((c + 1) / 2)], v[c] }'
}
# kp_bursts FILE: how many bursts the kernel saw (falls 20 ms or more apart begin a new one).
kp_bursts() { awk '{ if (!last || $2 - last >= 20000) k++; last = $2 } END { print k + 0 }' "$1"; }
# kp_wiegand WIDTH PULSE_US BIT_US KEYS: the keys as bursts; what the program measured in KP_SENT.
# The program and the lines' interrupt threads (irq/N-kiosk) on one vCPU: a thread on the other
# waits for the host to run that vCPU, and falls that come meanwhile are one event.
kp_wiegand() {
  for t in $(pgrep '^irq/[0-9]+-kiosk$'); do taskset -pc 0 "$t" >/dev/null || info "keypad: cannot pin irq thread $t"; done
  KP_SENT=$(echo "$4" | taskset -c 0 $P/keypad-wiegand "$SIMBASE" $KP_D0 $KP_D1 "$1" "$2" "$3" 150 2>&1)
}
# kp_wiegand_pin NAME WIDTH PULSE_US BIT_US KEYS: carol's code, then KEYS, until granted. A try whose
# bursts the kernel saw split (a write the host held up 20 ms or more: not a keypad's timing) is
# void and typed again, at most 4 tries; a try with whole bursts that is not granted fails at once.
# So is a try in which the kiosk refused more bursts than the keys hold on purpose (REFUSED, the
# 8-bit one's '!'): two falls the kernel joined into one event (its interrupt thread ran late,
# which the tracepoint cannot see) make a burst one bit short, which the kiosk refuses as it must.
KP_WV=0
kp_refused() { jlog | grep -c 'event=keypad_burst_refused' || true; }
kp_wiegand_pin() {
  KP_TRIES=0 KP_VOID=0
  while [ $KP_TRIES -lt 4 ]; do
    KP_TRIES=$((KP_TRIES + 1)) KP_WV=$((KP_WV + 1))
    kp_before=$(kp_refused)
    kp_irq_on
    kp_ask pin-carol-GREY-640x480 $KP_WV kp_wiegand "$2" "$3" "$4" "$5"
    kp_irq_off /tmp/kp-$1.irq
    KP_GOT=$(kp_reason $KP_WV) KP_SAW=$(kp_irq_stats /tmp/kp-$1.irq)
    info "keypad: Wiegand $1, try $KP_TRIES: ${KP_GOT:-no verdict}; keypad-wiegand measured: $KP_SENT; the kernel saw$KP_SAW"
    [ "$KP_GOT" = granted:valid ] && return 0
    kp_short=$(( $(kp_refused) - kp_before - ${6:-0} ))
    # whole bursts at a keypad's timing, none refused beyond those meant: no excuse
    [ "$(kp_bursts /tmp/kp-$1.irq)" = "${#5}" ] && [ "$kp_short" -le 0 ] && return 1
    [ "$kp_short" -gt 0 ] && info "keypad: Wiegand $1, try $KP_TRIES void: $kp_short burst(s) refused beyond those meant (a fall joined to the next by the kernel)"
    KP_VOID=$((KP_VOID + 1))
  done
  return 1
}

# 8-bit bursts, 100 us pulses every 2 ms: first a burst whose complement is wrong (noise), then carol's PIN and #.
if kp_wiegand_pin 8-bit 8 100 2000 "!$KP_CAROL#" 1 && jlog | grep -q 'event=keypad_burst_refused bits=8'; then
  pass "keypad: Wiegand 8-bit bursts (100 us pulses every 2 ms): a burst with a wrong complement refused, carol's PIN and # granted (try $KP_TRIES, $KP_VOID void): $(kp_verdict $KP_WV | cut -c1-60); the kernel saw$KP_SAW"
else fail "keypad: Wiegand 8-bit: '$KP_GOT' after $KP_TRIES tries ($KP_VOID void: bursts split by the host), refused bursts: $(jlog | grep -o 'keypad_burst_refused bits=[0-9]*' | tr '\n' ' ')"; kp_show; fi

# 4-bit bursts, 50 us pulses every 1 ms (the quick end of a real keypad), * clearing two digits, # ending.
if kp_wiegand_pin 4-bit 4 50 1000 "12*$KP_CAROL#"; then
  pass "keypad: Wiegand 4-bit bursts (50 us pulses every 1 ms; * cleared two digits, # ended) granted (try $KP_TRIES, $KP_VOID void): $(kp_verdict $KP_WV | cut -c1-60); the kernel saw$KP_SAW"
else fail "keypad: Wiegand 4-bit: '$KP_GOT' after $KP_TRIES tries ($KP_VOID void: bursts split by the host)"; kp_show; fi
systemctl stop kiosk
info "keypad: the Wiegand keypad's part took $(( ($(ms) - kp_w0) / 1000 )) s"

# ---- no digit of a PIN anywhere the kiosk writes ------------------------------------------------------
sleep 1
kill $KP_SUB 2>/dev/null; wait $KP_SUB 2>/dev/null
journalctl -b -q -o cat >/tmp/kp-journal.txt 2>/dev/null
cat /tmp/kp-journal.txt /tmp/kp-mqtt.txt >/tmp/kp-written.txt
find /var/lib/kiosk /run/kiosk /var/cache/kiosk -type f 2>/dev/null | while read -r f; do cat "$f"; done >>/tmp/kp-written.txt
leaks=0; for pin in $KP_PIN $KP_DURESS $KP_WRONG $KP_CAROL; do grep -aq "$pin" /tmp/kp-written.txt && leaks=$((leaks + 1)); done
if [ $leaks = 0 ] && grep -q 'pin_locked' /tmp/kp-journal.txt && grep -q '"type":"duress"' /tmp/kp-mqtt.txt; then
  pass "keypad: no PIN (of 4, the wrong one too) in the journal ($(wc -l </tmp/kp-journal.txt) lines, debug), MQTT ($(wc -l </tmp/kp-mqtt.txt) messages) or /var/lib/kiosk, /run/kiosk, /var/cache/kiosk ($(find /var/lib/kiosk /run/kiosk /var/cache/kiosk -type f 2>/dev/null | wc -l) files)"
else fail "keypad: $leaks of the 4 PINs found in what the kiosk wrote (or the search saw nothing)"; fi

kp quit
exec 7>&-
wait $KP_PY 2>/dev/null
rm -f /etc/kiosk/pins /etc/systemd/system/kiosk.service.d/mqtt.conf /tmp/kp.in
systemctl daemon-reload
unfeed
info "keypad: the group took $(( ($(ms) - kp_start) / 1000 )) s"
