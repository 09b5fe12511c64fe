#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The arm64 tier: the kiosk cross-built for Raspberry Pi OS trixie (arm64) on this amd64 machine,
# packaged, and run under qemu-user emulation (`make test-arm64`).
#
#   harness/arm64/run.sh
#
# Builds with harness/arm64/build.sh (the SDK of harness/arm64/sdk.sh, trixie's Swift 6.0.3 in the
# root of harness/trixie/run.sh): the arm64 release binary and .deb, the arm64 XCTest bundle, and the
# amd64 release binary from the same root and sources as the reference. Then one PASS/FAIL line per
# check, ending with "N passed, M failed" (exit 1 when anything failed):
#   the package: Architecture arm64, the files and maintainer scripts of the amd64 package, its
#     binary a stripped AArch64 ELF (LOAD segments aligned for a Pi 5's 16 KiB pages) that needs
#     no Swift toolchain (no libswift*/Foundation in NEEDED), Depends naming the package of every
#     library the binary needs (from the arm64 sysroot's dpkg database), the copyright naming
#     them too, lintian --pedantic with nothing to say;
#   under `qemu-aarch64 -cpu cortex-a72 -L SYSROOT` (a Raspberry Pi 4's core; the packaged, stripped
#     binary; the sysroot's runtime libraries): `kiosk --version`; `kiosk check` with a bad variable
#     exits 78; `kiosk decode` on the whole photo corpus prints exactly what the amd64 build prints;
#     `kiosk demo` ends with demo_result result=pass; the XCTest suite's architecture-sensitive
#     subset: all but the tests listed in SKIP below (each with why it cannot run under user
#     emulation) and in NEUTRAL (each with why the CPU cannot change it).
# The corpus: ../shared/corpus beside the repository (KIOSK_SHARED for another shared folder, KIOSK_CORPUS for another corpus). Logs and outputs
# of the last run: .cache/arm64/last/. Needs root (the builds run in the trixie root).
# KIOSK_ARM64_SABOTAGE=budget,demo (either or both: arm64 decodes with the default 60 ms budget;
# the demo reading only EAN-8, which it never shows) shows those checks fail when arm64 goes wrong.
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
CACHE=${KIOSK_ARM64_CACHE:-$REPO/.cache/arm64}
# ../shared beside the checkout, or KIOSK_SHARED (as harness/trixie/run.sh takes it).
SHARED=${KIOSK_SHARED:-$REPO/../shared}
CORPUS=${KIOSK_CORPUS:-$SHARED/corpus}
LAST=$CACHE/last
# A Cortex-A72 (Raspberry Pi 4; ARMv8.0): the binary must not use later instructions, and qemu's
# default CPU ("max") emulates pointer authentication, which trixie's arm64 libraries use on every
# call and which makes zbar about 5 times slower again under qemu 7.2.
QEMU_CPU=${KIOSK_ARM64_CPU:-cortex-a72}
# A decode budget no picture reaches: the reads must not depend on how fast the CPU is (the
# default 60 ms per picture lets an emulated CPU try fewer extra passes than a native one).
DECODE_BUDGET_MS=600000
SABOTAGE=${KIOSK_ARM64_SABOTAGE:-}

# Tests that cannot run under qemu-user, and why (Module.Class or Module.Class/test).
SKIP=(
  "DevToolsTests.BenchTests|performance benchmarks: under emulation they time qemu (over 5 minutes); a Pi's speed is not measured here"
  "DevToolsTests.CorpusTests/testDecodesAtLeastAsManyAsPlainZbarAndNeverAWrongText|counts the reads made within the decoder's wall-clock budget (60 ms a picture), which an emulated CPU spends on fewer extra passes (160 of the 163 it wants); the corpus check above compares the arm64 reads with the amd64 ones with the budget lifted"
  "CameraTests.LibV4L2DeviceTests/testOpeningSomethingThatIsNotAV4L2DeviceFailsWithENOTTY|qemu-user answers the ioctls it cannot translate (all of V4L2's) with ENOSYS itself, where the kernel says ENOTTY for /dev/null"
  "CameraTests.LibV4L2DeviceTests/testCameraOverTheRealDeviceReportsTheErrorAndLeavesNothingOpen|the same: VIDIOC_QUERYCAP on /dev/null gets ENOSYS from qemu-user, not the kernel's ENOTTY"
  "FleetTests.BrokerLinkTests/testTheLastWillSaysOfflineWhenTheKioskIsKilledAndOnlineComesBack|starts the arm64 FleetTestChild program as a child to kill it: without binfmt_misc (never registered here) the kernel cannot run an arm64 program started from the emulated test; the same last will is checked on the arm64 kiosk itself by KioskTests.FleetEndToEndTests, which runs it through the qemu wrapper"
  "FleetTests.BrokerLinkTests/testTheSpoolSurvivesSIGKILLWhileTheBrokerIsDown|the same child program; the spool surviving SIGKILL is checked on the arm64 kiosk by KioskTests.FleetEndToEndTests"
  "KioskTests.CredentialEndToEndTests/testAnUnsynchronisedClockDeniesTimeBoundCredentials|injects the clock's state with an LD_PRELOAD library the test builds with the host's cc: an amd64 library, which the emulated arm64 kiosk's loader ignores (wrong ELF class), so the kiosk would see the real clock; the rule itself is checked on the arm64 build by CredentialsTests.VerifierTests and PolicyTests.CredentialPolicyTests"
  "FleetTests.LibmosquittoOnFirstUseTests/testLibmosquittoIsNotMappedUntilUsed|starts the arm64 FleetTestChild program to read its /proc/self/maps: the same child program as above"
  "KioskTests.FleetEndToEndTests/testAMissingLibmosquittoIsNamedWithItsPackageAndExit69|hides the host's libmosquitto.so.1 in a mount namespace; the arm64 kiosk under qemu-user loads the sysroot's instead"
  "KioskTests.ScanHookTests/testProgramThatCannotStartIsLogged|qemu-user runs posix_spawn's vfork as a fork, so an exec that fails comes back as exit status 127 of a started child, not as posix_spawn's error"
  "KioskTests.KeypadEndToEndTests/testRightWrongNoneDuressAndALockoutThatOutlivesARestart|a Wiegand keypad's key bursts on the simulated chip, edges 2 ms apart ending a burst after a 100 ms gap: under qemu-user the emulated kiosk reads the edges late and a first PIN came out wrong here (its bursts joined or cut); the bursts' decoding and the PIN's steps run here in PolicyTests.KeypadPolicyTests, the end to end on amd64 (make test), a real keypad's timing only on a Pi"
)
# The architecture-sensitive subset: every test runs under qemu-user but these classes, which the
# CPU cannot change (the same Swift code over the kernel's and libc's behaviour, or the pure core's
# rules, which PolicyTests check here), and which `make test` runs whole on amd64. What an arm64
# build can break is kept: the C libraries' ABI (V4L2, GPIO, libcamera's loader, OpenSSL, zlib,
# libical, libmosquitto, sd_notify, the serial port), pixels and floating point (the readers, the
# camera's figures, the corpus, the screens), bytes and integer widths (CBOR, COSE, Base45, the
# store's records, OSDP's packets), and the packaged binary end to end (EndToEndTests,
# DoorEndToEndTests, the credential, pass, OSDP and fleet end-to-end tests, SystemdTests). A name
# here that names no test fails the tier (shards.sh), so the list cannot go stale unnoticed.
NEUTRAL=(
  "KioskTests.SignalTests|the stop and reload on signals: one sigwait thread's Swift code; under qemu-user the signals are qemu's emulation of the kernel's (58 s of the suite); the arm64 kiosk's clean stop is checked by EndToEndTests and SystemdTests here"
  "KioskTests.SiteBundleEndToEndTests|a bundle's apply and refusal on SIGHUP: the files' and signals' paths; its signature check (COSE over OpenSSL) runs here in CryptoTests and CredentialsTests, its reading in PolicyTests.SiteBundleTests (40 s of the suite)"
  "KioskTests.ModeEndToEndTests|the door's modes and the fire input: the rules' decisions (PolicyTests here) through the same process paths as DoorEndToEndTests"
  "KioskTests.TicketEndToEndTests|pretix tickets on the binary: their verification runs here in CredentialsTests.TicketVerifierTests, the rest is CredentialEndToEndTests' path"
  "KioskTests.AccessEndToEndTests|the access rules on the binary: the rules are the pure core's (PolicyTests here), through CredentialEndToEndTests' path"
  "KioskTests.AimTests|kiosk aim's text: its figures are the core's (PolicyTests.AimFigures here), its frames the camera's (CameraTests here)"
)
# The suite runs as KIOSK_ARM64_JOBS processes side by side (harness/xctest/shards.sh), each class
# in the least loaded one by the seconds it took last time (harness/xctest/seconds/arm64, written
# again with KIOSK_TEST_RECORD=1).
JOBS=${KIOSK_ARM64_JOBS:-3}

t_start=$(date +%s)
passed=0 failed=0
pass() { echo "PASS arm64: $*"; passed=$((passed + 1)); }
fail() { echo "FAIL arm64: $*"; failed=$((failed + 1)); }
finish() { echo "arm64: done in $(( $(date +%s) - t_start )) s"; echo "$passed passed, $failed failed"; [ "$failed" = 0 ]; exit; }
elapsed() { echo "$(( $(date +%s) - $1 )) s"; }
check() {  # check NAME COMMAND...: PASS when COMMAND succeeds; its output (the reason) in the line
  local name=$1 out t0=$(date +%s); shift
  if out=$("$@" 2>&1); then pass "$name ($(elapsed $t0))${out:+: $out}"; else fail "$name ($(elapsed $t0)): ${out:-failed}"; fi
}

[ "$(id -u)" = 0 ] || { fail "needs root (the trixie root: chroot and mounts)"; finish; }
# qemu-user runs the arm64 programs; lintian and file look at the package (build.sh installs the
# packaging tools: dpkg-dev, binutils-aarch64-linux-gnu).
"$REPO/harness/host-packages.sh" arm64 qemu-user lintian file || { fail "cannot install qemu-user, lintian, file"; finish; }
rm -rf "$LAST" && mkdir -p "$LAST"

# --- build: SDK, arm64 release + .deb + tests, amd64 reference -------------------------------------------
t0=$(date +%s)
if ! "$HERE/build.sh" --deb --tests --reference --out "$LAST" > "$LAST/products" 2> "$LAST/build.log"; then
  tail -30 "$LAST/build.log" | sed 's/^/  | /'
  fail "build ($(elapsed $t0); log: $LAST/build.log)"
  finish
fi
product() { sed -n "s/^$1 //p" "$LAST/products"; }
DEB=$(product deb) TESTS=$(product tests) REFERENCE=$(product reference) TROOT=$(product root)
SYSROOT=$(product sdk)/sysroot
pass "build ($(elapsed $t0)): $(grep -E '^arm64 sdk: made|^arm64 build: built' "$LAST/build.log" | sed 's/^arm64 //' | paste -sd ';' -) $(basename "$DEB") $(du -k "$DEB" | cut -f1) KiB"

# --- the package ------------------------------------------------------------------------------------------
PKG=$LAST/pkg
dpkg-deb -x "$DEB" "$PKG" && dpkg-deb -e "$DEB" "$PKG/DEBIAN"
KIOSK=$PKG/usr/bin/kiosk

package_architecture() {
  local a; a=$(dpkg-deb -f "$DEB" Architecture)
  [ "$a" = arm64 ] || { echo "Architecture: $a"; return 1; }
  [[ "$(basename "$DEB")" == kiosk_*_arm64.deb ]] || { echo "file name $(basename "$DEB")"; return 1; }
  echo "Architecture: arm64, $(basename "$DEB")"
}
check "package architecture" package_architecture

package_contents() {
  local f missing=""
  for f in usr/bin/kiosk lib/systemd/system/kiosk.service usr/share/kiosk/kiosk.env usr/share/doc/kiosk/README.md.gz \
           usr/share/doc/kiosk/kiosk.env usr/share/doc/kiosk/copyright usr/share/doc/kiosk/changelog.gz \
           usr/share/lintian/overrides/kiosk DEBIAN/postinst DEBIAN/prerm DEBIAN/postrm DEBIAN/md5sums; do
    [ -s "$PKG/$f" ] || missing="$missing $f"
  done
  [ -z "$missing" ] || { echo "missing:$missing"; return 1; }
  # No conffile: postinst makes /etc/default/kiosk from the defaults (kiosk setup rewrites it).
  [ ! -e "$PKG/DEBIAN/conffiles" ] && [ ! -e "$PKG/etc" ] || { echo "the package ships /etc or conffiles"; return 1; }
  grep -q "cp /usr/share/kiosk/kiosk.env /etc/default/kiosk" "$PKG/DEBIAN/postinst" || { echo "postinst makes no /etc/default/kiosk"; return 1; }
  grep -q '^ExecStart=/usr/bin/kiosk run$' "$PKG/lib/systemd/system/kiosk.service" || { echo "ExecStart is not /usr/bin/kiosk"; return 1; }
  echo "binary, unit, the settings' defaults (no conffile), docs, maintainer scripts"
}
check "package contents" package_contents

elf_machine() {
  local m c
  m=$(LC_ALL=C readelf -h "$KIOSK" | sed -n 's/^ *Machine: *//p')
  c=$(LC_ALL=C readelf -h "$KIOSK" | sed -n 's/^ *Class: *//p')
  [ "$m" = AArch64 ] && [ "$c" = ELF64 ] || { echo "Machine: $m, Class: $c"; return 1; }
  file "$KIOSK" | grep -q ', stripped' || { echo "not stripped: $(file "$KIOSK")"; return 1; }
  # A Raspberry Pi 5's kernel uses 16 KiB pages: every LOAD segment must be aligned to at least that.
  local align=0 a
  for a in $(LC_ALL=C readelf -lW "$KIOSK" | awk '$1 == "LOAD" { print $NF }'); do
    if [ "$align" = 0 ] || [ $((a)) -lt "$align" ]; then align=$((a)); fi
  done
  [ "$align" -ge 16384 ] || { echo "a LOAD segment is aligned to $align bytes, less than a Pi 5's 16 KiB pages"; return 1; }
  echo "usr/bin/kiosk: $c $m, stripped, LOAD segments aligned to $((align / 1024)) KiB, interpreter $(LC_ALL=C readelf -l "$KIOSK" | sed -n 's/.*interpreter: \(.*\)]/\1/p')"
}
check "binary ELF machine" elf_machine

no_swift_runtime() {
  local needed bad
  needed=$(LC_ALL=C readelf -d "$KIOSK" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
  [ -n "$needed" ] || { echo "no NEEDED entries (not a dynamic binary?)"; return 1; }
  bad=$(grep -E '^lib(swift|Foundation|XCTest|dispatch|BlocksRuntime|_Foundation)' <<< "$needed")
  [ -z "$bad" ] || { echo "needs the Swift runtime: $(echo $bad)"; return 1; }
  if LC_ALL=C readelf -d "$KIOSK" | grep -E 'R(UN)?PATH' | grep -q 'swift'; then echo "RUNPATH names a Swift folder"; return 1; fi
  echo "NEEDED: $(echo $needed)"
}
check "no Swift toolchain at run time" no_swift_runtime

# Every library the binary needs belongs to a package that Depends names (the sysroot's dpkg
# database says which package that is).
depends_cover_needed() {
  local depends names soname owner missing=""
  depends=$(dpkg-deb -f "$DEB" Depends)
  names=$(tr ',|' '\n\n' <<< "$depends" | awk '{print $1}')
  for soname in $(LC_ALL=C readelf -d "$KIOSK" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
    [ -e "$SYSROOT/usr/lib/aarch64-linux-gnu/$soname" ] || { missing="$missing $soname(not in the sysroot)"; continue; }
    owner=$(grep -l -x -F -e "/usr/lib/aarch64-linux-gnu/$soname" -e "/lib/aarch64-linux-gnu/$soname" "$SYSROOT"/var/lib/dpkg/info/*.list | head -1)
    [ -n "$owner" ] || { missing="$missing $soname(no package)"; continue; }
    owner=$(basename "${owner%.list}"); owner=${owner%%:*}
    grep -q -x -F "$owner" <<< "$names" || missing="$missing $soname($owner)"
  done
  [ -z "$missing" ] || { echo "not in Depends:$missing; Depends: $depends"; return 1; }
  echo "Depends: $depends"
}
check "Depends from the arm64 libraries" depends_cover_needed

# As harness/deploy/run.sh checks the amd64 package: the copyright names the package of every
# library the binary links (t64 names without the suffix), and lintian has nothing to say.
copyright_names_libraries() {
  local c=$PKG/usr/share/doc/kiosk/copyright soname owner missing=""
  for soname in $(LC_ALL=C readelf -d "$KIOSK" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
    owner=$(grep -l -x -F -e "/usr/lib/aarch64-linux-gnu/$soname" -e "/lib/aarch64-linux-gnu/$soname" "$SYSROOT"/var/lib/dpkg/info/*.list | head -1)
    owner=$(basename "${owner%.list}"); owner=${owner%%:*}; owner=${owner%t64}
    [ -n "$owner" ] && grep -q "\b$owner\b" "$c" || missing="$missing $soname(${owner:-no package})"
  done
  [ -z "$missing" ] || { echo "not named in the copyright:$missing"; return 1; }
  echo "every linked library's package is named"
}
check "copyright names the linked libraries" copyright_names_libraries

lintian_clean() {
  local out rc
  out=$(lintian --pedantic -I "$DEB" 2>&1); rc=$?
  out=$(grep -v 'running with root privileges' <<< "$out")
  [ "$rc" = 0 ] && ! grep -q '^[EW]:' <<< "$out" || { echo "exit $rc: $out"; return 1; }
  echo "0 errors, 0 warnings, $(grep -c '^[IP]:' <<< "$out") info/pedantic"
}
check "lintian" lintian_clean

# --- under emulation -------------------------------------------------------------------------------------
arm64() { qemu-aarch64 -cpu "$QEMU_CPU" -L "$SYSROOT" "$KIOSK" "$@"; }

version() {
  local out want
  want=$(dpkg-deb -f "$DEB" Version)
  out=$(arm64 --version) || { echo "exit $?: $out"; return 1; }
  [ "$(head -1 <<< "$out")" = "kiosk $want" ] || { echo "printed '$out', the package is $want"; return 1; }
  echo "$(echo $out)"
}
check "kiosk --version" version

bad_config() {
  local out status
  out=$(env -i KIOSK_FPS=fast PATH=/usr/bin:/bin qemu-aarch64 -cpu "$QEMU_CPU" -L "$SYSROOT" "$KIOSK" check 2>&1)
  status=$?
  [ $status = 78 ] || { echo "exit $status, expected 78: $out"; return 1; }
  grep -q 'event=config_error var=KIOSK_FPS' <<< "$out" || { echo "no config_error for KIOSK_FPS: $out"; return 1; }
  echo "exit 78: $(grep config_error <<< "$out" | head -1)"
}
check "kiosk check with a bad variable" bad_config

# The same pictures, in the same (byte) order, through both builds; any difference fails.
decode_corpus() {
  local blackbox=$CORPUS/zxing-blackbox t1 s64 sref n
  [ -d "$blackbox" ] || { echo "no corpus at $blackbox"; return 1; }
  # The trixie root sees ../shared at /work/shared (harness/trixie/run.sh binds it there).
  [ "$(cd "$CORPUS/.." && pwd)" = "$(cd "$SHARED" 2>/dev/null && pwd)" ] \
    || { echo "KIOSK_CORPUS must be the corpus folder of ../shared beside the repository or of KIOSK_SHARED (the trixie root sees only that one)"; return 1; }
  # build.sh names the reference by its resolved path (readlink -f): the root's own path must be
  # resolved too, or a .cache that is a symlink (CI's, into KIOSK_CI_CACHE) leaves the prefix on.
  local root_real reference_in_root
  root_real=$(readlink -f "$TROOT")
  reference_in_root=${REFERENCE#"$root_real"}
  [ "$reference_in_root" != "$REFERENCE" ] || { echo "the reference $REFERENCE is not inside the trixie root $root_real"; return 1; }
  t1=$(date +%s)
  "$REPO/harness/trixie/run.sh" -- bash -c 'cd /work/shared/corpus/zxing-blackbox && export LC_ALL=C && f=(*/*.png) && exec "$1" decode --budget-ms "$2" "${f[@]}"' \
    ref "$reference_in_root" "$DECODE_BUDGET_MS" > "$LAST/decode-amd64.txt" 2> "$LAST/decode-amd64.err"
  sref=$?
  local tref=$(elapsed $t1); t1=$(date +%s)
  local budget=(--budget-ms "$DECODE_BUDGET_MS")
  case ",$SABOTAGE," in *,budget,*) budget=() ;; esac
  # Two processes on alternate pictures (emulation is the slow part); their lines are put back in
  # the list's order (each line starts with its file's name).
  (cd "$blackbox" && export LC_ALL=C && f=(*/*.png) && printf '%s\n' "${f[@]}" > "$LAST/decode-files" && \
     odd=() even=() && for i in "${!f[@]}"; do if (( i % 2 )); then odd+=("${f[i]}"); else even+=("${f[i]}"); fi; done && \
     { arm64 decode "${budget[@]}" "${even[@]}" > "$LAST/decode-arm64.1" 2> "$LAST/decode-arm64.err1" & \
       arm64 decode "${budget[@]}" "${odd[@]}" > "$LAST/decode-arm64.2" 2> "$LAST/decode-arm64.err2"; \
       s2=$?; wait $! && exit $s2; })
  s64=$?
  awk 'FNR == NR { order[++n] = $0; next }
       { k = index($0, ": ") ? substr($0, 1, index($0, ": ") - 1) : "\001"; lines[k] = lines[k] $0 "\n" }
       END { for (i = 1; i <= n; i++) printf "%s", lines[order[i]]; printf "%s", lines["\001"] }' \
    "$LAST/decode-files" "$LAST/decode-arm64.1" "$LAST/decode-arm64.2" > "$LAST/decode-arm64.txt"
  cat "$LAST/decode-arm64.err1" "$LAST/decode-arm64.err2" > "$LAST/decode-arm64.err"
  local t64=$(elapsed $t1)
  [ $sref = 0 ] && [ $s64 = 0 ] || { echo "exit amd64 $sref, arm64 $s64: $(head -c 300 "$LAST/decode-amd64.err" "$LAST/decode-arm64.err")"; return 1; }
  n=$(wc -l < "$LAST/decode-arm64.txt")
  [ "$n" -gt 0 ] || { echo "no code read on either"; return 1; }
  if ! cmp -s "$LAST/decode-amd64.txt" "$LAST/decode-arm64.txt"; then
    echo "the reads differ (< amd64, > arm64):"
    diff "$LAST/decode-amd64.txt" "$LAST/decode-arm64.txt" | cut -c1-160 | head -20
    return 1
  fi
  echo "$(wc -l < "$LAST/decode-files") pictures, the same $n codes (amd64 $tref, arm64 under qemu $t64)"
}
check "decode corpus: arm64 = amd64" decode_corpus

demo() {
  local status
  case ",$SABOTAGE," in
    *,demo,*) KIOSK_SYMBOLOGIES=ean8 arm64 demo ;;
    *) arm64 demo ;;
  esac > "$LAST/demo.log" 2>&1
  status=$?
  [ $status = 0 ] && grep -q 'event=demo_result result=pass' "$LAST/demo.log" \
    || { echo "exit $status: $(grep -E 'demo_result|error' "$LAST/demo.log" | tail -3)"; return 1; }
  grep -o 'event=demo_result.*' "$LAST/demo.log"
}
check "kiosk demo" demo

# --- the XCTest suite under emulation -----------------------------------------------------------------------
xctest() {
  local wrapper=$LAST/kiosk-arm64
  # The end-to-end tests start KIOSK_BINARY themselves: without binfmt_misc an arm64 program can
  # only be started through qemu, so they start this (amd64) script, which execs qemu.
  # qemu-user looks a path up in the sysroot (-L) first: mmdebstrap made a /dev/ptmx there, a
  # device node with no devpts beside it, which opens with ENODEV; without it, the host's.
  rm -f "$SYSROOT/dev/ptmx"
  # And its /proc, an empty folder (mmdebstrap's mount point): `kiosk doctor` would see no process.
  if [ -d "$SYSROOT/proc" ]; then rmdir "$SYSROOT/proc" 2>/dev/null || true; fi
  printf '#!/bin/sh\nexec qemu-aarch64 -cpu %s -L %s %s "$@"\n' "$QEMU_CPU" "$SYSROOT" "$KIOSK" > "$wrapper"
  chmod 0755 "$wrapper"
  # The bundle's RUNPATH is the SDK's path inside the trixie root: LD_LIBRARY_PATH names the
  # Swift runtime's folder as the arm64 loader sees it (qemu looks it up under -L first).
  # The OSDP tests' control panel (libosdp, `make deps`) runs natively and drives the wrapper.
  # KIOSK_CHECKOUT: the bundle was compiled in the root's copy, /work/kiosk, which the native python
  # does not see; the scripts the tests hand it (Tests/Peers, harness/osdp) are this checkout's.
  local run=(env KIOSK_CORPUS="$CORPUS" KIOSK_BINARY="$wrapper" KIOSK_PEERS_PYTHON="$REPO/.cache/peers/bin/python" KIOSK_CHECKOUT="$REPO"
             qemu-aarch64 -cpu "$QEMU_CPU" -L "$SYSROOT" -E LD_LIBRARY_PATH=/usr/libexec/swift/lib/swift/linux "$TESTS")
  local args=(--jobs "$JOBS") s
  for s in "${SKIP[@]}" "${NEUTRAL[@]}"; do args+=(--skip "${s%%|*}"); done
  [ -z "${KIOSK_TEST_RECORD:-}" ] || args+=(--record "$REPO/harness/xctest/seconds/arm64")
  # An XCTSkip fails the tier unless harness/xctest/expected-skips/arm64 lists it.
  "$REPO/harness/xctest/shards.sh" --tier arm64 --logs "$LAST" "${args[@]}" -- "${run[@]}" | sed 's/^shards: //'
}
check "XCTest suite under qemu" xctest
for s in "${SKIP[@]}"; do echo "  not run under qemu-user: ${s%%|*}: ${s#*|}"; done
for s in "${NEUTRAL[@]}"; do echo "  not run under qemu-user, the CPU cannot change it: ${s%%|*}: ${s#*|}"; done

finish
