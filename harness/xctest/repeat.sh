#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# One XCTest test run COUNT times in a row, stopping at the first failure: for a test that must not
# be flaky (the exit button's press under load). With --load CPU, the test and a busy loop share
# that one core (taskset), as a loaded machine or qemu-user starves the kiosk's threads.
#
#   harness/xctest/repeat.sh [--load CPU] COUNT Module.Class/test -- BUNDLE-COMMAND...
#
# The end-to-end tests need KIOSK_BINARY (and the peers' KIOSK_PEERS_PYTHON) as `make test` sets
# them. Prints one line a run and then "N of COUNT passed"; exit 0 only when all passed. Logs in
# $TMPDIR/kiosk-repeat.*/run-N.log.
set -uo pipefail

CPU=
[ "${1:-}" = --load ] && { CPU=${2:?--load needs a CPU number}; shift 2; }
COUNT=${1:?usage: $0 [--load CPU] COUNT TEST -- BUNDLE-COMMAND...}
TEST=${2:?a test}
[ "${3:-}" = -- ] || { echo "usage: $0 [--load CPU] COUNT TEST -- BUNDLE-COMMAND..." >&2; exit 64; }
shift 3
LOGS=$(mktemp -d "${TMPDIR:-/tmp}/kiosk-repeat.XXXXXX")
pin=()
busy=
if [ -n "$CPU" ]; then
  pin=(taskset -c "$CPU")
  taskset -c "$CPU" bash -c 'while :; do :; done' &
  busy=$!
fi
trap '[ -z "$busy" ] || kill "$busy" 2>/dev/null' EXIT
passed=0
for ((i = 1; i <= COUNT; i++)); do
  t0=$(date +%s%N)
  if "${pin[@]}" "$@" "$TEST" > "$LOGS/run-$i.log" 2>&1 && grep -q 'with 0 failures' "$LOGS/run-$i.log" \
     && ! grep -q "' skipped" "$LOGS/run-$i.log"; then
    passed=$((passed + 1))
    echo "run $i: pass ($(( ($(date +%s%N) - t0) / 1000000 )) ms)"
  else
    echo "run $i: FAIL (log: $LOGS/run-$i.log)"
    grep -E 'error: |failed \(' "$LOGS/run-$i.log" | head -5 | cut -c1-300
    break
  fi
done
echo "$passed of $COUNT passed${CPU:+ (on CPU $CPU with a busy loop beside it)}"
[ "$passed" = "$COUNT" ]
