#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# What a frame costs on an arm64 CPU, counted rather than timed (`make bench-arm64`;
# docs/measurements/arm64-counts.md): guest instructions per frame under qemu-aarch64 -cpu cortex-a72
# with a per-thread instruction-count plugin (insn-count.c, built against qemu-plugin.h from
# Debian's qemu source package), for
#   kiosk     the arm64 kiosk-dev's frame loop (`kiosk-dev count kiosk`: ScanService.process, as
#             `kiosk-dev bench` runs it), cross-built as the .deb's kiosk is (harness/arm64/build.sh);
#   zbar      zbar on every full frame, as zbarcam scans (zbar-count.c against the arm64 sysroot's
#             libzbar);
#   zbar5     the same with only the kiosk's zbar symbologies (qrcode,ean13,ean8,upca,code128);
#   floor     touching each byte of each frame once (zbar-count.c floor);
# on the bench's workloads (kiosk-dev count dump: empty, motion, presentations, low-light at
# 640x480 and 1280x720). Each figure is (count of the run - count of the same program only reading
# the frames) / frames; zbar, at 50-250 M instructions a frame the slow part under emulation, scans
# every STRIDE-th frame (default 3: a sample; its figure is per frame scanned). Each run is made
# twice (--runs): the table gives the spread.
#
#   harness/bench-arm64/run.sh [--short] [--runs N] [--stride N] [--kinds LIST] [--sizes LIST]
#   harness/bench-arm64/run.sh --credentials [--runs N] [--dev PATH]
#   harness/bench-arm64/run.sh --speech [--runs N] [--dev PATH]
#
# --short (CI): presentations at 640x480 only, one run, zbar on every 4th frame (each code is held
# near for 30 frames) and not the zbar5 baseline. Every code zbar reads on the presentations
# must be read by the kiosk too, or this fails. Cached in $KIOSK_BENCH_ARM64_CACHE (default
# .cache/bench-arm64): the plugin, the qemu source's header, the workloads' frames.
#
# --credentials (`make bench-credentials-arm64`): instead of frames, one credential's verification
# (`kiosk-dev credentials --count KIND`: a KC1 credential, a pass of each form, a new phone's
# point), counted as (the count of 250 - the count of 50) / 200, with the ratios to a KC1's; and a
# PIN's check as the PIN's gate makes it (two scrypt hashes, the PIN's and its duress code's, in
# OpenSSL's libcrypto: `--count pin`, LOGN 11 as `pin set` writes, and LOGN 10 and 12), counted as
# (the count of 13 - the count of 3) / 10, with the milliseconds it would take a Pi 4 core (A72 at
# 1.5 GHz) at IPC 1.0 and, scrypt's 2 MiB being twice the A72's L2, at a pessimistic 0.5; then
# `kiosk-dev credentials` timed under qemu (indicative only). --dev PATH: an arm64 kiosk-dev
# already built, in place of harness/arm64/build.sh --dev's.
#
# --speech (`make bench-arm64 BENCH_ARGS=--speech`): saying a phrase as the speaker does after a
# verdict (`kiosk-dev speech --count N`: the default phrases through ALSA's plug, 22,050 Hz mono to
# 48 kHz stereo, into its file PCM over null; rendered at start by espeak-ng, which runs natively,
# outside the count, and the same in both runs), counted as (the count of 60 - the count of 10) / 50.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
CACHE=${KIOSK_BENCH_ARM64_CACHE:-$REPO/.cache/bench-arm64}
MIRROR=${KIOSK_DEBIAN_MIRROR:-http://deb.debian.org/debian}
SHORT=0 RUNS=2 STRIDE=3 KINDS= SIZES= CREDENTIALS=0 SPEECH=0 DEV=
while [ $# -gt 0 ]; do
  case $1 in
    --short) SHORT=1 RUNS=1 STRIDE=4 ;;
    --runs) RUNS=${2:?}; shift ;;
    --stride) STRIDE=${2:?}; shift ;;
    --kinds) KINDS=${2:?}; shift ;;
    --sizes) SIZES=${2:?}; shift ;;
    --credentials) CREDENTIALS=1 ;;
    --speech) SPEECH=1 ;;
    --dev) DEV=${2:?}; shift ;;
    *) echo "usage: $0 [--short] [--runs N] [--stride N] [--kinds empty,motion,presentations,low-light] [--sizes 640x480,1280x720] | --credentials [--runs N] [--dev PATH] | --speech [--runs N] [--dev PATH]" >&2; exit 64 ;;
  esac
  shift
done
# KIOSK_BENCH_ARM64_BREAK=miss: the kiosk's reads of the first QR code are dropped before the check
# (the sabotage that shows the check fails when the kiosk misses a code zbar reads).
BREAK=${KIOSK_BENCH_ARM64_BREAK:-}
for v in $(compgen -e | grep '^KIOSK_BENCH'); do unset "$v"; done
die() { echo "FAIL bench-arm64: $*"; exit 1; }
say() { echo "bench-arm64: $*" >&2; }
[ "$(id -u)" = 0 ] || die "needs root (the trixie root of the cross build)"
mkdir -p "$CACHE"
export PATH=$PATH:/opt/swift/usr/bin

# --- host packages: qemu-user 7.2 (accepts -plugin), dpkg-dev (apt-get source) ------------------------
"$REPO/harness/host-packages.sh" bench-arm64 qemu-user dpkg-dev gcc xz-utils || die "could not install its host packages"

# --- the plugin, against the very qemu-user installed --------------------------------------------------
QVER=$(dpkg-query -W -f='${source:Version}' qemu-user)
PLUGIN=$CACHE/libinsn-count-$QVER-$(sha256sum "$HERE/insn-count.c" | cut -c1-12).so
QINC=$CACHE/qemu-include-$QVER
if [ ! -f "$QINC/qemu-plugin.h" ]; then
  A=$CACHE/apt
  mkdir -p "$A/lists/partial" "$A/cache/archives/partial" "$CACHE/qemu-src"
  cat >"$A/sources.list" <<EOF
deb-src $MIRROR bookworm main
deb-src $MIRROR bookworm-updates main
deb-src ${MIRROR%/debian}/debian-security bookworm-security main
EOF
  apto=(-o Dir::Etc::SourceList="$A/sources.list" -o Dir::Etc::SourceParts=/nonexistent -o Dir::State::Lists="$A/lists"
        -o Dir::Cache="$A/cache" -o APT::Sandbox::User=root -q)
  say "qemu $QVER: its source package (for qemu-plugin.h)"
  apt-get "${apto[@]}" update >"$CACHE/apt.log" 2>&1 || { tail "$CACHE/apt.log"; die "apt-get update (deb-src) failed"; }
  (cd "$CACHE/qemu-src" && apt-get "${apto[@]}" source --download-only "qemu=$QVER") >>"$CACHE/apt.log" 2>&1 \
    || { tail "$CACHE/apt.log"; die "apt-get source qemu=$QVER failed"; }
  orig=$(ls "$CACHE"/qemu-src/qemu_*.orig.tar.* | head -1)
  rm -rf "$CACHE"/qemu-include* && mkdir -p "$QINC"
  tar -xf "$orig" -C "$QINC" --wildcards --strip-components=3 '*/include/qemu/qemu-plugin.h'
  [ -f "$QINC/qemu-plugin.h" ] || die "no include/qemu/qemu-plugin.h in $orig"
  rm -rf "$CACHE/qemu-src" "$A"   # the header is all they were for
fi
if [ ! -e "$PLUGIN" ]; then
  rm -f "$CACHE"/libinsn-count-*.so
  gcc -O2 -shared -fPIC -Wall -I "$QINC" -o "$PLUGIN" "$HERE/insn-count.c" || die "the plugin did not build"
  say "plugin built: $PLUGIN"
fi

# --- the arm64 programs: kiosk-dev (the kiosk's code, as the .deb's kiosk is built) and zbar-count ---------
if [ -z "$DEV" ]; then
  BUILD=$("$REPO/harness/arm64/build.sh" --dev) || die "harness/arm64/build.sh --dev failed"
  SDK=$(echo "$BUILD" | sed -n 's/^sdk //p')
  DEV=$(echo "$BUILD" | sed -n 's/^dev //p')
else
  SDK=$("$REPO/harness/arm64/sdk.sh") || die "no arm64 SDK"
fi
SYSROOT=$SDK/sysroot
[ -x "$DEV" ] || die "no arm64 kiosk-dev ($DEV)"
ZC=$CACHE/zbar-count
clang --target=aarch64-linux-gnu --sysroot="$SYSROOT" -fuse-ld=lld -O2 -Wall -o "$ZC" "$HERE/zbar-count.c" -lzbar \
  || die "zbar-count did not cross-build"
QEMU=(qemu-aarch64 -cpu cortex-a72 -L "$SYSROOT")
# The default KIOSK_SYMBOLOGIES (qrcode,ean13,ean8,upca,code128,aztec,datamatrix,pdf417) that zbar
# has: the second baseline, zbar on every full frame with the kiosk's symbologies.
KIOSK_ZBAR_SYMBOLOGIES=qrcode,ean13,ean8,upca,code128

# count OUT PROGRAM ARGS...: run it under the plugin; the program's output in OUT, its count printed.
count() {
  local out=$1; shift
  "${QEMU[@]}" -plugin "$PLUGIN,out=$out.insn" "$@" >"$out" || die "$* failed under qemu-aarch64"
  awk '$1 == "total" { print $2 }' "$out.insn"
}

if [ $CREDENTIALS = 1 ]; then
  W=$(mktemp -d "${TMPDIR:-/tmp}/kiosk-bench-arm64.XXXXXX")
  trap 'rm -rf "$W"' EXIT
  export SWIFT_DETERMINISTIC_HASHING=1   # the same work in every run (qemu-user passes it on)
  per() {  # per KIND [FEW MANY]: one verification's instructions
    local a b few=${2:-50} many=${3:-250}
    a=$(count "$W/n$few" "$DEV" credentials --count "$1" --iterations "$few") && [ -n "$a" ] || return 1
    b=$(count "$W/n$many" "$DEV" credentials --count "$1" --iterations "$many") && [ -n "$b" ] || return 1
    echo $(( (b - a) / (many - few) ))
  }
  : >"$CACHE/credentials.txt"
  for run in $(seq 1 "$RUNS"); do
    line=$run
    for kind in kc1 pass1 pass1-compressed pass2 point point-compressed; do
      n=$(per "$kind") || die "kiosk-dev credentials --count $kind failed under qemu-aarch64"
      line="$line $n"
    done
    echo "$line" | awk '{
      printf "run %d, instructions a verification: KC1 (ES256) %d; pass form 1 %d (%.2fx), a new phone + its point %d = %.2fx, compressed: %d + %d = %.2fx; form 2 %d (%.2fx)\n",
        $1, $2, $3, $3 / $2, $6, ($3 + $6) / $2, $4, $7, ($4 + $7) / $2, $5, $5 / $2 }' | tee -a "$CACHE/credentials.txt"
    line=$run
    for kind in pin-logn10 pin pin-logn12; do
      n=$(per "$kind" 3 13) || die "kiosk-dev credentials --count $kind failed under qemu-aarch64"
      line="$line $n"
    done
    # A Pi 4 core's milliseconds: instructions / (IPC x 1.5e9) x 1000. Estimates, not measurements.
    echo "$line" | awk '{
      printf "run %d, instructions a PIN check (two scrypt hashes, r 8, p 1): LOGN 10 %d, LOGN 11 %d, LOGN 12 %d; a Pi 4 core (A72 1.5 GHz) at IPC 1.0: %.1f, %.1f, %.1f ms; at IPC 0.5: %.1f, %.1f, %.1f ms\n",
        $1, $2, $3, $4, $2 / 1.5e6, $3 / 1.5e6, $4 / 1.5e6, $2 / 0.75e6, $3 / 0.75e6, $4 / 0.75e6 }' | tee -a "$CACHE/credentials.txt"
  done
  say "timed under qemu-user (indicative only: emulation weighs code unevenly):"
  timed=$("${QEMU[@]}" "$DEV" credentials --iterations 300) || die "kiosk-dev credentials failed under qemu-aarch64"
  echo "$timed" | sed -n '2,7p' | tee -a "$CACHE/credentials.txt"
  echo "$timed" | grep -A1 "PIN's check" | tee -a "$CACHE/credentials.txt"
  exit 0
fi

if [ $SPEECH = 1 ]; then
  W=$(mktemp -d "${TMPDIR:-/tmp}/kiosk-bench-arm64.XXXXXX")
  trap 'rm -rf "$W"' EXIT
  export SWIFT_DETERMINISTIC_HASHING=1
  : >"$CACHE/speech.txt"
  for run in $(seq 1 "$RUNS"); do
    a=$(count "$W/s10" "$DEV" speech --count 10) && [ -n "$a" ] || die "kiosk-dev speech --count 10 failed under qemu-aarch64: $(cat "$W/s10")"
    b=$(count "$W/s60" "$DEV" speech --count 60) && [ -n "$b" ] || die "kiosk-dev speech --count 60 failed under qemu-aarch64: $(cat "$W/s60")"
    echo "run $run, instructions a phrase (the speaker's work and ALSA's conversion to 48 kHz stereo): $(( (b - a) / 50 ))" | tee -a "$CACHE/speech.txt"
  done
  exit 0
fi

if [ $SHORT = 1 ]; then sizes="640x480"; kinds="presentations"; else sizes="640x480 1280x720"; kinds="empty motion presentations low-light"; fi
[ -z "$KINDS" ] || kinds=${KINDS//,/ }
[ -z "$SIZES" ] || sizes=${SIZES//,/ }
W=$(mktemp -d "${TMPDIR:-/tmp}/kiosk-bench-arm64.XXXXXX")
trap 'rm -rf "$W"' EXIT
RESULTS=$W/results.txt
: >"$RESULTS"
missed_total=0
for size in $sizes; do
  for kind in $kinds; do
    frames=$CACHE/frames-$kind-$size.raw
    devkey=$(sha256sum "$DEV" | cut -c1-12)
    if [ "$(cat "$frames.key" 2>/dev/null)" != "$devkey" ]; then
      "${QEMU[@]}" "$DEV" count dump "$kind" "$size" "$frames" >"$frames.list" || die "kiosk-dev count dump $kind $size failed"
      echo "$devkey" >"$frames.key"
    fi
    n=$(awk '$1 == "frames" { print $2 }' "$frames.list")
    w=${size%x*} h=${size#*x}
    for run in $(seq 1 "$RUNS"); do
      k=$(count "$W/kiosk" "$DEV" count kiosk "$kind" "$size" "$frames")
      k0=$(count "$W/kread" "$DEV" count read "$kind" "$size" "$frames")
      z=$(count "$W/zbar" "$ZC" zbar "$frames" "$w" "$h" "$STRIDE")
      zn=$(awk '$1 == "scanned" { print $2 }' "$W/zbar")
      # zbar with only the kiosk's zbar symbologies (the default KIOSK_SYMBOLOGIES that zbar reads)
      # (not in the short form: CI's check needs zbar's reads, not this second baseline's count)
      zk=0
      [ $SHORT = 1 ] || zk=$(count "$W/zbark" "$ZC" zbar "$frames" "$w" "$h" "$STRIDE" "$KIOSK_ZBAR_SYMBOLOGIES")
      f=$(count "$W/floor" "$ZC" floor "$frames" "$w" "$h")
      z0=$(count "$W/zread" "$ZC" read "$frames" "$w" "$h")
      echo "$kind $size $run $n $k $k0 $z $f $z0 $zn $zk" >>"$RESULTS"
      z5="zbar5 $(( (zk - z0) / zn ))"; [ $SHORT = 1 ] && z5="zbar5 not counted (--short)"
      say "$kind $size run $run: kiosk $(( (k - k0) / n )), zbar $(( (z - z0) / zn )), $z5, floor $(( (f - z0) / n )) instructions a frame ($n frames, zbar on $zn)"
    done
    if [ "$kind" = presentations ]; then
      # Every code shown that zbar read on the presentations, the kiosk read too (zbar's other
      # reads are misreads of the noise, in symbologies the kiosk does not enable).
      [ "$BREAK" = miss ] && sed -i '/ KIOSK-QR-0001$/d' "$W/kiosk"
      if python3 - "$frames.list" "$W/zbar" "$W/kiosk" <<'PY'
import sys
def payloads(path, tag):
    out = {}
    for line in open(path, encoding="utf-8", errors="replace"):
        parts = line.rstrip("\n").split(" ", 3)
        if parts[0] == tag and len(parts) == 4:
            out.setdefault(parts[3], parts[1])
    return out
shown = [l[6:].rsplit(" ", 3)[0] for l in open(sys.argv[1]) if l.startswith("shown ")]
zbar, kiosk = payloads(sys.argv[2], "read"), payloads(sys.argv[3], "read")
both = [p for p in shown if p in zbar]
missed = [p for p in both if p not in kiosk]
if missed:
    print("FAIL bench-arm64: on presentations the kiosk missed codes zbar read: " + "; ".join(missed))
    sys.exit(1)
print("PASS bench-arm64: presentations: the kiosk read all %d shown codes zbar read (%s); of %d shown, the kiosk read %d, zbar %d"
      % (len(both), "; ".join(both), len(shown), sum(p in kiosk for p in shown), len(both)))
PY
      then :; else missed_total=$((missed_total + 1)); fi
    fi
  done
done

# --- the table: per frame, the spread between runs, and the estimates ---------------------------------------
awk -v runs="$RUNS" '
  function pct(a, b) { return b ? sprintf("%.2f%%", 100 * a / b) : "-" }
  { key = $1 " " $2; if (!(key in seen)) { order[++nk] = key; seen[key] = 1 }
    n = $4; kf = ($5 - $6) / n; zf = ($7 - $9) / $10; ff = ($8 - $9) / n
    K[key, $3] = kf; Z[key, $3] = zf; F[key, $3] = ff; ZK[key, $3] = $11 ? ($11 - $9) / $10 : 0 }
  END {
    printf "%-24s %12s %12s %12s %10s %10s %10s %12s %10s %10s\n", "workload", "kiosk/frame", "zbar/frame", "floor/frame", "kiosk/zbar", "above floor", "spread", "zbar5/frame", "kiosk/zbar5", "above floor"
    for (i = 1; i <= nk; i++) {
      key = order[i]; k = K[key, 1]; z = Z[key, 1]; f = F[key, 1]; spread = 0
      for (r = 2; r <= runs; r++) { d = K[key, r] - k; if (d < 0) d = -d; if (k && d / k > spread) spread = d / k
                                    d = Z[key, r] - z; if (d < 0) d = -d; if (z && d / z > spread) spread = d / z }
      zk = ZK[key, 1]
      printf "%-24s %12.0f %12.0f %12.0f %10s %10s %10s %12.0f %10s %10s\n", key, k, z, f, pct(k, z), pct(k - f, z - f), (runs > 1 ? sprintf("%.4f%%", 100 * spread) : "-"), zk, pct(k, zk), (zk ? pct(k - f, zk - f) : "-")
      # One core at 30 fps: instructions a second / (IPC x clock). Estimates, not measurements.
      est[i] = sprintf("%-24s Pi 4 (A72 1.5 GHz, IPC 1.0): kiosk %.2f%%, zbar %.1f%%; Pi 5 (A76 2.4 GHz, IPC 1.5): kiosk %.2f%%, zbar %.1f%%; Zero 2 W (A53 1.0 GHz, IPC 0.6): kiosk %.2f%%, zbar %.1f%%",
        key, 100 * k * 30 / 1.5e9, 100 * z * 30 / 1.5e9, 100 * k * 30 / 3.6e9, 100 * z * 30 / 3.6e9, 100 * k * 30 / 0.6e9, 100 * z * 30 / 0.6e9)
    }
    print ""; print "one core at 30 fps (an ESTIMATE from the counts, with the IPC assumed):"
    for (i = 1; i <= nk; i++) print est[i]
  }' "$RESULTS" | tee "$CACHE/table-$([ $SHORT = 1 ] && echo short || echo full).txt"
cp "$RESULTS" "$CACHE/results-$([ $SHORT = 1 ] && echo short || echo full).txt"
[ "$missed_total" = 0 ]
