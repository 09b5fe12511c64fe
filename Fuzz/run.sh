#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Fuzz/run.sh BIN SECONDS JOBS WORK SEEDS:EXECUTABLE...: runs each libFuzzer target SECONDS (JOBS
# side by side) from what WORK/SEEDS learnt before, Fuzz/Corpus/SEEDS merged in; a crash or a
# failed check is written to Fuzz/Crashes/ and fails the run (`make fuzz` calls it).
set -uo pipefail
[ $# -ge 5 ] || { echo "usage: $0 BIN SECONDS JOBS WORK SEEDS:EXECUTABLE..." >&2; exit 64; }
cd "$(dirname "$0")/.."
bin=$1 seconds=$2 jobs=$3 work=$4; shift 4
mkdir -p Fuzz/Crashes "$work"

run() {  # run SEEDS:EXECUTABLE: one target, its log and exit status beside its corpus
  local seeds=${1%%:*} exe=${1##*:}
  mkdir -p "$work/$seeds"
  cp -n Fuzz/Corpus/"$seeds"/* "$work/$seeds/" 2>/dev/null
  "$bin/$exe" -max_total_time="$seconds" -print_final_stats=1 -artifact_prefix="Fuzz/Crashes/$exe-" \
    "$work/$seeds" >"$work/$seeds.log" 2>&1
  echo $? >"$work/$seeds.rc"
}

while [ $# -gt 0 ]; do
  batch=()
  for _ in $(seq "$jobs"); do
    [ $# -gt 0 ] || break
    batch+=("$1"); run "$1" & shift
  done
  echo "== $(for t in "${batch[@]}"; do printf '%s ' "${t##*:}"; done)($seconds s each, side by side)"
  wait
  for t in "${batch[@]}"; do
    log=$work/${t%%:*}.log
    if [ "$(cat "$work/${t%%:*}.rc")" != 0 ]; then
      tail -30 "$log"; echo "fuzz: ${t##*:} found a crash (Fuzz/Crashes/)"; exit 1
    fi
    echo "${t##*:}: $(grep -E 'DONE|stat::average_exec_per_sec' "$log" | paste -sd ' ' -)"
  done
done
