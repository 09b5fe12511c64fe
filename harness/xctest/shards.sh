#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The XCTest suite as two processes side by side: the suite mostly waits (the end-to-end, signal
# and systemd tests start the kiosk and watch it in real time), so two processes take about half
# the time of one. `make test` runs it on this machine, harness/arm64/run.sh under qemu-user.
#
#   harness/xctest/shards.sh [--only NAME]... [--second CLASS]... [--skip NAME]... [--logs DIR] -- BUNDLE-COMMAND...
#
# BUNDLE-COMMAND runs the test bundle (kioskPackageTests.xctest, perhaps through qemu): with
# --list-tests it lists the tests, with a comma-separated list of Module.Class/test it runs them.
# The classes named by --second (Module.Class) run in the second process, the rest in the first.
# --only NAME (Module, Module.Class or Module.Class/test) keeps only those tests (the trixie tier's
# part of the suite); --skip NAME leaves tests out; a NAME that names no test is an error. Each process's output goes to DIR/xctest-1.log and DIR/xctest-2.log (default: a folder
# of its own under TMPDIR, printed). Prints one line: the tests run and each process's summary,
# then any failures; exit 0 only when every selected test ran and none failed.
set -uo pipefail

SECOND=() SKIPS=() ONLY=() LOGS=
while [ $# -gt 0 ]; do
  case $1 in
    --second) SECOND+=("${2:?--second needs a class}"); shift ;;
    --only) ONLY+=("${2:?--only needs a name}"); shift ;;
    --skip) SKIPS+=("${2:?--skip needs a name}"); shift ;;
    --logs) LOGS=${2:?--logs needs a folder}; shift ;;
    --) shift; break ;;
    *) echo "usage: $0 [--only NAME]... [--second CLASS]... [--skip NAME]... [--logs DIR] -- BUNDLE-COMMAND..." >&2; exit 64 ;;
  esac
  shift
done
[ $# -gt 0 ] || { echo "shards: no bundle command" >&2; exit 64; }
[ -n "$LOGS" ] || LOGS=$(mktemp -d "${TMPDIR:-/tmp}/kiosk-xctest.XXXXXX")
mkdir -p "$LOGS"

all=$("$@" --list-tests 2>&1) || { echo "shards: --list-tests failed: $all"; exit 1; }
selected=$(grep -E '^[A-Za-z]+Tests\.[A-Za-z0-9_]+/test' <<< "$all")
if [ ${#ONLY[@]} -gt 0 ]; then
  kept=""
  for name in "${ONLY[@]}"; do
    mine=$(awk -v n="$name" '$0 == n || index($0, n "/") == 1 || index($0, n ".") == 1' <<< "$selected")
    [ -n "$mine" ] || { echo "shards: --only names no test of the bundle: $name"; exit 1; }
    kept=$kept$mine$'\n'
  done
  selected=$(grep . <<< "$kept" | sort -u)
fi
for name in "${SKIPS[@]}"; do
  kept=$(awk -v n="$name" '$0 != n && index($0, n "/") != 1' <<< "$selected")
  [ "$kept" != "$selected" ] || { echo "shards: --skip names no test of the bundle: $name"; exit 1; }
  selected=$kept
done
[ ${#ONLY[@]} -gt 0 ] || [ "$(wc -l <<< "$selected")" -gt 100 ] || { echo "shards: only $(wc -l <<< "$selected") tests selected"; exit 1; }
one=$selected two=""
for c in "${SECOND[@]}"; do
  mine=$(awk -v c="$c/" 'index($0, c) == 1' <<< "$one")
  [ -n "$mine" ] || [ ${#ONLY[@]} -gt 0 ] || { echo "shards: --second names no test of the bundle: $c"; exit 1; }
  two=$two$mine$'\n'
  one=$(awk -v c="$c/" 'index($0, c) != 1' <<< "$one")
done
two=$(grep . <<< "$two")
if [ -z "$two" ]; then  # none of the --second classes selected: the tests split in two halves
  n=$(wc -l <<< "$one")
  two=$(tail -n +$((n / 2 + 1)) <<< "$one")
  one=$(head -n $((n / 2)) <<< "$one")
fi

pids=() lists=() i=0
for list in "$one" "$two"; do
  [ -n "$list" ] || continue  # an empty list would run the whole bundle
  i=$((i + 1))
  "$@" "$(paste -sd, <<< "$list")" > "$LOGS/xctest-$i.log" 2>&1 &
  pids+=($!)
done
status=0 executed=0 line=""
for ((i = 1; i <= ${#pids[@]}; i++)); do
  wait "${pids[i-1]}" || status=1
  l=$(grep -E "^[[:space:]]*Executed [0-9]+ tests?" "$LOGS/xctest-$i.log" | tail -1 | sed 's/^[[:space:]]*//')
  grep -Eq '(with|and) 0 failures' <<< "$l" || status=1
  n=$(sed -n 's/^Executed \([0-9]*\) test.*/\1/p' <<< "$l"); executed=$((executed + ${n:-0}))
  line="$line${line:+; }process $i: ${l:-no summary}"
done
want=$(wc -l <<< "$selected")
if [ $status != 0 ] || [ "$executed" -ne "$want" ]; then
  echo "shards: $executed of $want selected tests executed, with failures; $line (logs: $LOGS)"
  grep -h -E 'error: |failed \(' "$LOGS"/xctest-*.log | head -20 | cut -c1-300
  exit 1
fi
echo "shards: $executed tests, 0 failures ($line)"
