#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Cross-builds the kiosk for Raspberry Pi OS trixie (arm64) on this amd64 machine: trixie's amd64
# Swift 6.0.3 (the trixie root of harness/trixie/run.sh) with the arm64 SDK of harness/arm64/sdk.sh.
#
#   harness/arm64/build.sh             the release kiosk (-c release --static-swift-stdlib --product kiosk)
#   harness/arm64/build.sh --deb       and build/kiosk_<version>_arm64.deb from it (`make deb ARCH=arm64`)
#   harness/arm64/build.sh --tests     and the XCTest bundle for arm64 (optimised, with -enable-testing)
#   harness/arm64/build.sh --dev       and kiosk-dev for arm64 (release; the bench's workloads, for
#                                    harness/bench-arm64/run.sh)
#   harness/arm64/build.sh --reference and the amd64 release binary from the same root and sources
#                                    (the reference of harness/arm64/run.sh's decode comparison)
#   --out DIR                        where --deb writes the .deb (default: build/)
#
# Prints what it used and made, one `NAME PATH` line each (sdk, root: the trixie root; binary,
# deb, tests, dev, reference), on stdout; the build's own output goes to stderr. The products stay in
# the trixie root's copy of the checkout (.build/arm64 and .build/arm64-tests, beside the trixie
# tier's .build, whose release build is the reference), so a second run rebuilds what changed.
# The SDK is bind-mounted read-only at /opt/kiosk-arm64 inside the root, in a mount namespace of
# this script's own: nothing stays mounted when it ends, however it ends. Needs root. Do not run
# it while the trixie tier runs: both build in the root's copy of the checkout (its copying is one at a
# time, harness/trixie/run.sh's lock).
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
MOUNT=/opt/kiosk-arm64
WANT_DEB=0 WANT_TESTS=0 WANT_REF=0 WANT_DEV=0
OUT=$REPO/build
while [ $# -gt 0 ]; do
  case "$1" in
    --deb) WANT_DEB=1 ;;
    --tests) WANT_TESTS=1 ;;
    --reference) WANT_REF=1 ;;
    --dev) WANT_DEV=1 ;;
    --out) OUT=${2:?--out needs a folder}; shift ;;
    -h|--help) sed -n '3,22s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) echo "usage: $0 [--deb] [--tests] [--dev] [--reference] [--out DIR]" >&2; exit 64 ;;
  esac
  shift
done

die() { echo "arm64 build: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "needs root (the trixie root: chroot and mounts)"
t0=$(date +%s)

SDK=$("$HERE/sdk.sh")
TROOT=$("$REPO/harness/trixie/run.sh" --root | tail -1)
[ -x "$SDK/swift-build" ] && [ -d "$TROOT/usr/libexec/swift" ] || die "no SDK ($SDK) or trixie root ($TROOT)"

# What runs inside the root (in its copy of the checkout, /work/kiosk). The release (and kiosk-dev)
# and the tests build side by side, each in its own scratch folder: a release build compiles one
# module at a time (whole-module optimisation), which keeps one core of two busy, and each build
# fills the other's idle core (CI's cold run saw the machine about 70% busy with one build).
release="echo '== arm64 release' >&2; $MOUNT/swift-build -c release --static-swift-stdlib --product kiosk --scratch-path .build/arm64 >&2"
[ $WANT_DEV = 1 ] && release="$release && echo '== arm64 kiosk-dev' >&2 && $MOUNT/swift-build -c release --static-swift-stdlib --product kiosk-dev --scratch-path .build/arm64 >&2"
# The tests optimised (-c release, -enable-testing for @testable, as `make soak` builds them):
# under qemu the suite took 14 minutes as a debug build (the scene-rendering tests, on a fake
# clock, are CPU-bound), under 3 as an optimised one.
tests=true
[ $WANT_TESTS = 1 ] && tests="echo '== arm64 tests' >&2; $MOUNT/swift-build -c release --build-tests -Xswiftc -enable-testing --scratch-path .build/arm64-tests >&2"
steps="( $tests ) & t=\$!; r=0; ( $release ) || r=\$?; s=0; wait \$t || s=\$?
  [ \$r = 0 ] || echo '== arm64 release failed' >&2; [ \$s = 0 ] || echo '== arm64 tests failed' >&2; [ \$r = 0 ] && [ \$s = 0 ]"
[ $WANT_REF = 1 ] && steps="$steps && echo '== amd64 release (reference)' >&2 && swift build -c release --static-swift-stdlib --product kiosk >&2"
# The SDK's folder, read-only at $MOUNT; harness/trixie/run.sh adds its own mounts (proc, dev, sys,
# ../shared) in the same private namespace and takes them down again.
mkdir -p "$TROOT$MOUNT"
unshare --mount --propagation private bash -c '
  set -e
  mount --bind "$1" "$2" && mount -o remount,bind,ro "$2"
  exec "$3" -- bash -c "$4"
' inner "$SDK" "$TROOT$MOUNT" "$REPO/harness/trixie/run.sh" "$steps" >&2 \
  || die "the build failed"

products=$TROOT/work/kiosk/.build
binary=$products/arm64/aarch64-unknown-linux-gnu/release/kiosk
[ -x "$binary" ] || die "no binary at $binary"
echo "sdk $SDK"
echo "root $TROOT"
echo "binary $binary"
if [ $WANT_DEV = 1 ]; then
  dev=$products/arm64/aarch64-unknown-linux-gnu/release/kiosk-dev
  [ -x "$dev" ] || die "no kiosk-dev at $dev"
  echo "dev $dev"
fi
if [ $WANT_TESTS = 1 ]; then
  tests=$products/arm64-tests/aarch64-unknown-linux-gnu/release/kioskPackageTests.xctest
  [ -x "$tests" ] || die "no test bundle at $tests"
  echo "tests $tests"
fi
if [ $WANT_REF = 1 ]; then
  reference=$(readlink -f "$products/release")/kiosk
  [ -x "$reference" ] || die "no amd64 binary at $reference"
  echo "reference $reference"
fi
echo "arm64 build: built in $(( $(date +%s) - t0 )) s" >&2

if [ $WANT_DEB = 1 ]; then
  # The host's packaging tools: dpkg-shlibdeps, the arm64 strip, qemu-user for `kiosk --version`.
  "$REPO/harness/host-packages.sh" "arm64 build" dpkg-dev binutils-aarch64-linux-gnu qemu-user || die "cannot install the packaging tools"
  deb=$("$REPO/deploy/build-deb.sh" --binary "$binary" --arch arm64 --sysroot "$SDK/sysroot" --out "$OUT") \
    || die "deploy/build-deb.sh failed"
  echo "deb $deb"
fi
