#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The XCTest suite as N processes side by side: the suite mostly waits (the end-to-end, signal and
# systemd tests start the kiosk and watch it in real time), so the processes overlap their waits.
# `make test` runs it on this machine (4 processes), harness/arm64/run.sh under qemu-user (3).
#
#   harness/xctest/shards.sh [--jobs N] [--only NAME]... [--skip NAME]... [--tier TIER] [--expect-skip NAME]...
#                            [--record FILE] [--logs DIR] -- BUNDLE-COMMAND...
#
# BUNDLE-COMMAND runs the test bundle (kioskPackageTests.xctest, perhaps through qemu): with
# --list-tests it lists the tests, with a comma-separated list of Module.Class/test it runs them.
# A class runs whole in one process (its class setUp and fixtures shared), unless it alone is
# longer than a process's share: then its tests are placed one by one. The units go, the longest
# first, each to the process with the least seconds so far, by the seconds each class took in its
# tier's last recorded run (harness/xctest/seconds/TIER: `Class SECONDS` a line; a class not
# there counts 1 s). --record FILE writes those seconds from this run's logs (after a run that
# passed; `make test TEST_RECORD=1`).
# --only NAME (Module, Module.Class or Module.Class/test) keeps only those tests (the trixie tier's
# part of the suite); --skip NAME leaves tests out; a NAME that names no test is an error. Each
# process's output goes to DIR/xctest-K.log (default: a folder of its own under TMPDIR, printed).
# Prints one line: the tests run and each process's summary, then any failures; exit 0 only when
# every selected test ran, none failed and none skipped (XCTSkip) unless the tier expects it.
#
# A skip is a failure unless expected: a missing peer, corpus or tool must not pass a tier. The
# tier's expected skips are in harness/xctest/expected-skips/TIER (TIER: --tier, else
# $KIOSK_TEST_TIER, else `test`, the tier of `make test`), one a line, `NAME  REASON` (NAME as
# --only takes it; `#` begins a comment); --expect-skip NAME adds one. A listed test that ran is
# said (the list may be out of date), not failed: it depends on the machine (root, namespaces).
set -uo pipefail

JOBS=2 SKIPS=() ONLY=() LOGS= RECORD= TIER=${KIOSK_TEST_TIER:-test} EXPECT=()
while [ $# -gt 0 ]; do
  case $1 in
    --jobs) JOBS=${2:?--jobs needs a number}; shift ;;
    --record) RECORD=${2:?--record needs a file}; shift ;;
    --only) ONLY+=("${2:?--only needs a name}"); shift ;;
    --skip) SKIPS+=("${2:?--skip needs a name}"); shift ;;
    --logs) LOGS=${2:?--logs needs a folder}; shift ;;
    --tier) TIER=${2:?--tier needs a name}; shift ;;
    --expect-skip) EXPECT+=("${2:?--expect-skip needs a name}"); shift ;;
    --) shift; break ;;
    *) echo "usage: $0 [--jobs N] [--only NAME]... [--skip NAME]... [--tier TIER] [--expect-skip NAME]... [--record FILE] [--logs DIR] -- BUNDLE-COMMAND..." >&2; exit 64 ;;
  esac
  shift
done
[ $# -gt 0 ] || { echo "shards: no bundle command" >&2; exit 64; }
[[ $JOBS =~ ^[1-9][0-9]?$ ]] || { echo "shards: --jobs takes 1 to 99, not '$JOBS'" >&2; exit 64; }
[ -n "$LOGS" ] || LOGS=$(mktemp -d "${TMPDIR:-/tmp}/kiosk-xctest.XXXXXX")
mkdir -p "$LOGS"

HERE=$(cd "$(dirname "$0")" && pwd)
EXPECTED_FILE=$HERE/expected-skips/$TIER SECONDS_FILE=$HERE/seconds/$TIER
[ -f "$EXPECTED_FILE" ] || { echo "shards: no list of the expected skips for the tier '$TIER': $EXPECTED_FILE"; exit 1; }
while read -r name reason; do
  case $name in ''|'#'*) continue ;; esac
  [ -n "$reason" ] || { echo "shards: $EXPECTED_FILE: $name: an expected skip needs its reason"; exit 1; }
  EXPECT+=("$name")
done < "$EXPECTED_FILE"

# What needs the shared folder beside the checkout (harness/shared-skips): allowed to skip, and
# named in the summary, only outside CI and only when that folder is missing (a clone alone).
SHARED_OK=""
if [ "${CI:-}" != true ] && [ ! -d "${KIOSK_SHARED:-$HERE/../../../shared}" ]; then
  while read -r name reason; do
    case $name in ''|'#'*) continue ;; esac
    SHARED_OK=$SHARED_OK$name$'\n'
  done < "$HERE/../shared-skips"
fi

all=$("$@" --list-tests 2>&1) || { echo "shards: --list-tests failed: $all"; exit 1; }
every=$(grep -E '^[A-Za-z]+Tests\.[A-Za-z0-9_]+/test' <<< "$all")
selected=$every
# What NAME (Module, Module.Class or Module.Class/test) names among the lines given.
names() { awk -v n="$1" '$0 == n || index($0, n "/") == 1 || index($0, n ".") == 1' <<< "$2"; }
shared_ok=""
while read -r name; do
  [ -n "$name" ] || continue
  [[ $name == *Tests.* ]] || continue  # a script tier's check, not a test
  mine=$(names "$name" "$every")
  [ -n "$mine" ] || { echo "shards: harness/shared-skips names no test of the bundle: $name"; exit 1; }
  shared_ok=$shared_ok$mine$'\n'
done <<< "$SHARED_OK"
expected=""
for name in "${EXPECT[@]}"; do
  mine=$(names "$name" "$every")
  [ -n "$mine" ] || { echo "shards: an expected skip names no test of the bundle: $name (tier $TIER)"; exit 1; }
  expected=$expected$mine$'\n'
done
if [ ${#ONLY[@]} -gt 0 ]; then
  kept=""
  for name in "${ONLY[@]}"; do
    mine=$(names "$name" "$selected")
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
# The units, longest first, each to the least loaded process ("K UNIT" lines): a class whole, or,
# a class longer than a process's share (trixie's ScreenTests), each of its tests, at its share.
placed=$(awk -v jobs="$JOBS" -v file="$SECONDS_FILE" '
    BEGIN { while ((getline l < file) > 0) { split(l, f, " "); if (f[1] !~ /^#/ && f[2] != "") took[f[1]] = f[2] } }
    { c = $0; sub(/\/.*/, "", c); if (!(c in n)) order[++classes] = c; n[c]++; test[c, n[c]] = $0 }
    END {
      for (i = 1; i <= classes; i++) { c = order[i]; short = c; sub(/^[^.]*\./, "", short); w[c] = (short in took) ? took[short] : 1; total += w[c] }
      for (i = 1; i <= classes; i++) {
        c = order[i]
        if (w[c] > total / jobs && n[c] > 1) { for (t = 1; t <= n[c]; t++) print w[c] / n[c], test[c, t] }
        else print w[c], c
      }
    }' <<< "$selected" |
  sort -k1,1gr -k2 |
  awk -v jobs="$JOBS" '{ best = 1; for (k = 2; k <= jobs; k++) if (load[k] < load[best]) best = k; load[best] += $1; print best, $2 }')

pids=() i=0
for ((k = 1; k <= JOBS; k++)); do
  # The selected tests of this process's units: a test named itself, or its class.
  list=$(awk -v k="$k" 'NR == FNR { if ($1 == k) want[$2] = 1; next } { c = $0; sub(/\/.*/, "", c); if ($0 in want || c in want) print }' \
    <(echo "$placed") <(echo "$selected"))
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
# The skips: "Test Case 'Class.test' skipped", named back as Module.Class/test.
skipped=$(sed -n "s/^Test Case '\([A-Za-z0-9_]*\)\.\([A-Za-z0-9_]*\)' skipped.*/\1\/\2/p" "$LOGS"/xctest-*.log | sort -u)
unexpected=0 as_expected=0 skipped_full="" for_want=""
while read -r s; do
  [ -n "$s" ] || continue
  full=$(awk -v s=".$s" 'length($0) > length(s) && substr($0, length($0) - length(s) + 1) == s' <<< "$selected" | head -1)
  skipped_full=$skipped_full${full:-$s}$'\n'
  if [ -n "$full" ] && grep -qxF "$full" <<< "$expected"; then
    as_expected=$((as_expected + 1))
  elif [ -n "$full" ] && grep -qxF "$full" <<< "$shared_ok"; then
    why=$(awk -v f="$full" '$1 == f || index(f, $1 "/") == 1 { $1 = ""; sub(/^ +/, ""); print; exit }' "$HERE/../shared-skips")
    for_want="$for_want${for_want:+; }$full ($why)"
  else
    unexpected=$((unexpected + 1))
    why=$(grep -h -F "${s%/*}.${s#*/} : Test skipped" "$LOGS"/xctest-*.log | head -1 | sed 's/.*: Test skipped - //')
    echo "shards: skipped, not expected in the tier '$TIER': ${full:-$s}: ${why:-no reason given}"
  fi
done <<< "$skipped"
# Listed, selected, and run all the same: said, for the list to be kept honest.
ran_listed=$(grep -xF -f <(grep . <<< "$selected") <<< "$expected" | grep -vxF -f <(grep . <<< "${skipped_full:-none}") | sort -u)
[ -z "$ran_listed" ] || echo "shards: expected to skip in the tier '$TIER' but ran: $(paste -sd' ' <<< "$ran_listed") ($EXPECTED_FILE may be out of date)"
if [ $unexpected != 0 ]; then
  echo "shards: $unexpected unexpected skips in the tier '$TIER' (a missing peer, corpus or tool fails a tier; a skip this tier must accept goes in $EXPECTED_FILE with its reason); $line (logs: $LOGS)"
  exit 1
fi
[ -z "$for_want" ] || echo "shards: skipped for want of the shared folder beside the checkout (${KIOSK_SHARED:-../shared}; outside CI only, harness/shared-skips says what each needs): $for_want"
echo "shards: $executed tests, 0 failures, $as_expected skipped as the tier '$TIER' expects$([ -z "$for_want" ] || echo ", $(tr -cd ';' <<< "$for_want" | wc -c | awk '{print $1 + 1}') for want of ../shared") ($line)"
# The seconds each class took, for the next run's placement (Class SECONDS, the longest first; the
# modules' own suites left out): always in LOGS/seconds, and in FILE with --record FILE.
{ echo "# seconds each class took in the tier '$TIER' (harness/xctest/shards.sh --record, $(date -u +%F))"
  sed -n "s/^Test Suite '\([A-Za-z0-9_]*\)' passed at .*/\1/p; s/^[[:space:]]*Executed [0-9]* tests\{0,1\}, with .* in \([0-9.]*\) (.*/=\1/p" "$LOGS"/xctest-*.log |
    awk '/^=/ { if (name != "") { took[name] += substr($0, 2); name = "" } next } { name = $0 }
         END { for (c in took) printf "%s %.1f\n", c, took[c] }' |  # a class split over processes: its parts summed
    grep -v -w -F -f <(sed 's/\..*//' <<< "$every" | sort -u) | sort -k2,2gr; } > "$LOGS/seconds"
if [ -n "$RECORD" ]; then
  cp "$LOGS/seconds" "$RECORD"
  echo "shards: the classes' seconds written to $RECORD"
fi
