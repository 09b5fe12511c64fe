#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The manual's checks (`make test-docs`, part of `make test`; issue 36):
#   - the variables: the code's table (`kiosk-dev variables`), docs/man/variables.txt,
#     docs/reference.md, kiosk.conf(5) and ../shared/docs/interface.md name the same ones, and the
#     generated files are what `make docs` makes now (harness/docs/variables.py; without
#     interface.md that leg is skipped and said so);
#   - every local link of README.md, docs/*.md, docs/design/ and docs/measurements/ leads to a file
#     and heading (harness/docs/links.py);
#   - the docs have not drifted from the checkout (harness/docs/drift.py): the fuzz targets they name
#     are the Makefile's FUZZ_TARGETS and Fuzz/Package.swift's, counted right; each `make` target,
#     `kiosk-dev` command and path of the checkout they name exists;
#   - the manual pages render without a warning: `groff -man -Tutf8 -ww -z` and
#     `MANWIDTH=80 man --warnings -l` say nothing on stderr.
#
#   harness/docs/run.sh --kiosk-dev PATH    (default: the debug build's, built when missing)
# One PASS/FAIL/SKIP line a check, then `N passed, M failed, K skipped`; exit 1 on a failure.
set -uo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
kiosk_dev=
while [ $# -gt 0 ]; do
  case "$1" in
    --kiosk-dev) kiosk_dev=${2:?--kiosk-dev needs a path}; shift 2 ;;
    *) echo "run.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
passed=0 failed=0 skipped=0
pass() { echo "PASS $1${2:+: $2}"; passed=$((passed + 1)); }
fail() { echo "FAIL $1${2:+: $2}"; failed=$((failed + 1)); }
# A SKIP fails the tier unless listed in harness/docs/expected-skips (harness/skips.sh).
. "$(cd "$(dirname "$0")/.." && pwd)/skips.sh"
skips_expected "$(cd "$(dirname "$0")" && pwd)/expected-skips"
work=$(mktemp -d /tmp/kiosk-docs.XXXXXX)
trap 'rm -rf "$work"' EXIT

if [ -z "$kiosk_dev" ]; then
  export PATH=$PATH:/opt/swift/usr/bin
  (cd "$repo" && swift build --product kiosk-dev >&2) || { fail build "swift build --product kiosk-dev"; kiosk_dev=/nonexistent; }
  [ "$kiosk_dev" = /nonexistent ] || kiosk_dev=$(cd "$repo" && swift build --show-bin-path)/kiosk-dev
fi

if "$kiosk_dev" variables > "$work/table" 2> "$work/table.err" && [ -s "$work/table" ]; then
  if out=$("$repo/harness/docs/variables.py" check --table "$work/table" 2>&1); then
    pass variables "$(tail -1 <<<"$out" | sed 's/^variables.py: //')"
    grep '^interface.md: \|^SKIP' <<<"$out" | while read -r line; do echo "    $line"; done
    if grep -q '^SKIP' <<<"$out"; then skip variables-interface "$(grep '^SKIP' <<<"$out" | sed 's/^SKIP //')"; fi
  else
    fail variables "the code, the meanings, docs/reference.md, kiosk.conf(5) and interface.md disagree"
    sed 's/^/    /' <<<"$out"
  fi
else
  fail variables "$kiosk_dev variables failed"; sed 's/^/    /' "$work/table.err"
fi

if out=$("$repo/harness/docs/links.py" 2>&1); then
  pass links "$(tail -1 <<<"$out" | sed 's/^links.py: //')"
else
  fail links "a link of the manual leads nowhere"; sed 's/^/    /' <<<"$out"
fi

for check in fuzz make paths kiosk-dev; do
  args=("$check"); [ "$check" = kiosk-dev ] && args+=(--kiosk-dev "$kiosk_dev")
  if out=$("$repo/harness/docs/drift.py" "${args[@]}" 2>&1); then
    pass "drift-$check" "$(tail -1 <<<"$out" | sed 's/^drift.py: //')"
  else
    fail "drift-$check" "the docs name what the checkout does not have"; sed 's/^/    /' <<<"$out"
  fi
done

for page in "$repo/docs/man/kiosk.8" "$repo/docs/man/kiosk.conf.5"; do
  name=${page##*/}
  if ! command -v groff >/dev/null; then
    skip "man-$name" "no groff here (Debian package groff-base)"
    continue
  fi
  err=$(groff -man -Tutf8 -ww -z "$page" 2>&1)
  [ -z "$err" ] && pass "groff-$name" "groff -man -Tutf8 -ww: no warning" || { fail "groff-$name" "groff -ww warns"; sed 's/^/    /' <<<"$err"; }
  if command -v man >/dev/null; then
    err=$(MANWIDTH=80 man --warnings -l "$page" 2>&1 >"$work/page.txt")
    if [ -z "$err" ] && grep -q '^NAME' "$work/page.txt" && [ "$(LC_ALL=C.UTF-8 wc -L < "$work/page.txt")" -le 80 ]; then
      pass "man-$name" "MANWIDTH=80 man --warnings -l: no warning, $(wc -l < "$work/page.txt") lines of at most 80 columns"
    else
      fail "man-$name" "man -l warns, or a line is wider than 80 columns"
      [ -z "$err" ] || sed 's/^/    /' <<<"$err"; LC_ALL=C.UTF-8 grep -E '^.{81,}' "$work/page.txt" | sed 's/^/    wide: /'
    fi
  else
    skip "man-$name" "no man here (Debian package man-db)"
  fi
done

skips_summary
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
