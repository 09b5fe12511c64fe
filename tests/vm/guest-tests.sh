#!/bin/sh
# The checks, run inside the VM by /init against the real drivers. One PASS/FAIL line per check,
# then "RESULT N passed, M failed"; exit 0 when nothing failed.
KVER=$(cat /tests/kernel)
PASSED=0 FAILED=0
pass() { echo "PASS $*"; PASSED=$((PASSED + 1)); }
fail() { echo "FAIL $*"; FAILED=$((FAILED + 1)); }
info() { echo "INFO $*"; }

# load MODULE [PARAMS]: insmod it and what it needs (order computed on the host), params on it.
load() {
  m=$1; shift
  for ko in $(cat /lib/modules/$KVER/deps/$m); do
    name=$(basename "$ko" .ko | tr - _)
    grep -q "^$name " /proc/modules && continue
    if [ "$(basename "$ko" .ko)" = "$m" ]; then insmod "$ko" "$@"; else insmod "$ko"; fi || return 1
  done
}

load vivid n_devs=1 node_types=0x101 num_inputs=1 input_types=0x3 num_outputs=1 output_types=0x1 || fail "load vivid"
load gpio-sim || fail "load gpio-sim"
info "modules: $(cut -d' ' -f1 /proc/modules | tr '\n' ' ')"
ls -l /dev/video* /dev/gpiochip* 2>&1 | while read -r l; do info "$l"; done

if grep -q vmexplore /proc/cmdline; then
  v4l2-ctl -d /dev/video0 --all 2>&1 | sed 's/^/INFO /'
  v4l2-ctl -d /dev/video0 --list-dv-timings 2>&1 | sed 's/^/INFO /' | head -60
  v4l2-ctl -d /dev/video0 --list-formats 2>&1 | sed 's/^/INFO /'
  v4l2-ctl -d /dev/video1 --list-formats-out 2>&1 | sed 's/^/INFO /'
  /bin/kiosk --version 2>&1 | sed 's/^/INFO /'
fi

echo "RESULT $PASSED passed, $FAILED failed"
[ "$FAILED" = 0 ]
