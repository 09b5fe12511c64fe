# SPDX-License-Identifier: Apache-2.0
# Sourced by the tiers' scripts that print PASS/FAIL/SKIP lines (harness/docs, harness/deploy,
# harness/vm): a SKIP is a failure unless the tier expects it. A missing peer, corpus or tool must
# not pass a tier; what a tier accepts not to check is listed beside its script, in its
# `expected-skips` file, one a line: `NAME  REASON` (NAME: the SKIP line's first word, or its
# words up to the colon; `#` begins a comment). KIOSK_EXPECT_SKIPS (names, space-separated) adds
# some for one run.
#
#   skips_expected FILE      reads the tier's list (a missing file: none expected)
#   skip_expected NAME       true when NAME is expected to skip
#   skip NAME [WHY]          SKIP when expected, else FAIL (counts `skipped` or `failed`)

# What needs the shared folder (harness/shared-skips) may also skip when that folder is missing,
# outside CI (CI=true fails them as any other): a clone with nothing beside it; `skips_summary`
# names them.
#
#   skips_summary            one line naming what skipped for want of the shared folder, if any

SKIPS_EXPECTED=" ${KIOSK_EXPECT_SKIPS:-} "
SKIPS_FILE=
SKIPS_SHARED=" "
SKIPPED_SHARED=""
SKIPS_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [ "${CI:-}" != true ] && [ ! -d "${KIOSK_SHARED:-$SKIPS_REPO/../shared}" ]; then
  while read -r name reason; do
    case $name in ''|'#'*) continue ;; esac
    SKIPS_SHARED="$SKIPS_SHARED$name "
  done < "$SKIPS_REPO/harness/shared-skips"
fi
skips_expected() {
  SKIPS_FILE=$1
  [ -f "$1" ] || return 0
  local name reason
  while read -r name reason; do
    case $name in ''|'#'*) continue ;; esac
    [ -n "$reason" ] || { echo "FAIL skips: $1: $name is listed without its reason"; failed=$((failed + 1)); continue; }
    SKIPS_EXPECTED="$SKIPS_EXPECTED$name "
  done < "$1"
}
skip_expected() { case $SKIPS_EXPECTED in *" $1 "*) return 0 ;; esac; return 1; }
skip() {
  if skip_expected "$1"; then
    echo "SKIP $1${2:+: $2}"; skipped=$((skipped + 1))
  elif case $SKIPS_SHARED in *" $1 "*) true ;; *) false ;; esac; then
    echo "SKIP $1: no shared folder beside the checkout (${KIOSK_SHARED:-../shared}), allowed outside CI${2:+: $2}"
    skipped=$((skipped + 1)); SKIPPED_SHARED="$SKIPPED_SHARED${SKIPPED_SHARED:+, }$1"
  else
    echo "FAIL $1: skipped, and this tier does not expect it (${SKIPS_FILE:-no list}: NAME REASON)${2:+: $2}"; failed=$((failed + 1))
  fi
}
skips_summary() {
  [ -z "$SKIPPED_SHARED" ] || echo "skipped for want of the shared folder beside the checkout (outside CI; harness/shared-skips says what each needs): $SKIPPED_SHARED"
}
