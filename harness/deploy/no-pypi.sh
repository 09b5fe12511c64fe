#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The build needs only the build (issue 36): `make release`, `make deb`, `make deb ARCH=arm64` and
# deploy/install.sh install Debian packages and never ask PyPI for the tests' Python peers.
#
#   harness/deploy/no-pypi.sh [--arm64]
#
# Each target runs with PyPI out of reach and every way to it watched: pip's index is a closed port
# (PIP_INDEX_URL=http://127.0.0.1:9/, PIP_NO_INDEX=1), `pip` and `pip3` on PATH and the Makefile's
# PYTHON (which makes the peers' venv) are stand-ins that note their call and fail, and the peers
# go to an empty folder of their own (PEERS_DIR and PYTHON are passed in MAKEFLAGS, so install.sh's
# own `make release` gets them too): an existing .cache/peers cannot hide a call. (python3 itself
# stays: a build step may use it; only the way to PyPI is closed.) A target passes when it succeeds, no stand-in was
# called, `make peers` did not run and the peers' folder was not made. The control: `make peers`
# under the same watch must fail and be seen. `make deb ARCH=arm64` runs when the trixie root and
# the arm64 SDK are cached (.cache/trixie, .cache/arm64) or with --arm64 (which makes them: about
# 4 minutes and 5 GB the first time); else it is a SKIP line. Needs root for apt as `make deps`
# does; the Debian packages should be installed already (apt reaches Debian's archive, not PyPI).
# One PASS/FAIL/SKIP line a check, then `N passed, M failed, K skipped`; exit 1 on a failure.
set -uo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
arm64=0
[ "${1:-}" = --arm64 ] && arm64=1
passed=0 failed=0 skipped=0
pass() { echo "PASS $1${2:+: $2}"; passed=$((passed + 1)); }
fail() { echo "FAIL $1${2:+: $2}"; failed=$((failed + 1)); }
# A SKIP fails the tier unless listed in harness/deploy/expected-skips-no-pypi (harness/skips.sh).
. "$(cd "$(dirname "$0")/.." && pwd)/skips.sh"
skips_expected "$(cd "$(dirname "$0")" && pwd)/expected-skips-no-pypi"

work=$(mktemp -d /tmp/kiosk-no-pypi.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bin" "$work/python"
calls=$work/calls
: > "$calls"
for tool in bin/pip bin/pip3 python/python3; do
  printf '#!/bin/sh\necho "%s $*" >> "%s"\necho "no-pypi.sh: %s called: the build must not need it" >&2\nexit 1\n' \
    "${tool#*/}" "$calls" "${tool#*/}" > "$work/$tool"
  chmod 755 "$work/$tool"
done
peers=$work/peers
export PATH=$work/bin:$PATH:/opt/swift/usr/bin
export PIP_INDEX_URL=http://127.0.0.1:9/ PIP_NO_INDEX=1 PIP_CONFIG_FILE=/dev/null
export MAKEFLAGS="PEERS_DIR=$peers PYTHON=$work/python/python3"

# watched NAME DETAIL COMMAND...: COMMAND succeeds, and nothing reached for PyPI meanwhile.
watched() {
  local name=$1 detail=$2 t0=$SECONDS log=$work/$1.log; shift 2
  : > "$calls"
  if ! (cd "$repo" && "$@") > "$log" 2>&1; then
    fail "$name" "$detail: failed"; tail -20 "$log" | sed 's/^/    /'; return
  fi
  if [ -s "$calls" ] || [ -e "$peers" ] || grep -q '^make peers' "$log"; then
    fail "$name" "$detail: reached for the peers"; sed 's/^/    /' "$calls"; grep '^make peers' "$log" | sed 's/^/    /'; rm -rf "$peers"; return
  fi
  pass "$name" "$detail, no pip, no peers' python, no make peers ($((SECONDS - t0)) s)"
}

# Where it runs: `make test-no-pypi` (CI) runs it in a network namespace of its own (unshare -n):
# no network at all, so not only PyPI but every host is out of reach.
ifaces=$(awk -F: 'NR > 2 { gsub(/ /, "", $1); printf "%s ", $1 }' /proc/net/dev)   # this namespace's
if [ "$ifaces" = "lo " ]; then echo "INFO network: none (only lo): PyPI and every other host out of reach"
else echo "INFO network: $ifaces(PyPI closed by the stand-ins above; unshare -n closes the rest)"; fi

# The control: the watch does see `make peers`.
: > "$calls"
if (cd "$repo" && make -s peers) > "$work/control.log" 2>&1 || [ ! -s "$calls" ]; then
  fail control "make peers under the watch should fail and be seen"; sed 's/^/    /' "$work/control.log"
else
  pass control "make peers under the watch fails and is seen ($(head -1 "$calls"))"
fi
rm -rf "$peers"

watched release "make release" make release
watched deb "make deb" make deb
watched install-sh "deploy/install.sh without --binary (its own make release), staged" \
  env DESTDIR="$work/stage" deploy/install.sh
if [ "$arm64" = 1 ] || { [ -d "$repo/.cache/trixie" ] && [ -d "$repo/.cache/arm64" ]; }; then
  watched deb-arm64 "make deb ARCH=arm64" make deb ARCH=arm64
else
  skip deb-arm64 "no .cache/trixie and .cache/arm64 here (--arm64 makes them)"
fi

echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
