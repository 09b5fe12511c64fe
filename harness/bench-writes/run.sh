#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# make bench-writes (issue 45): what the kiosk makes the card write, counted at the block device.
# The state directory is an ext4 file system (as Raspberry Pi OS formats its card: mkfs.ext4,
# mounted noatime) on a loop device; each phase gets a fresh one, and its bytes are the device's
# own count of written sectors (/sys/block/loopN/stat, field 7, x 512) from after a sync before
# the kiosk starts to after a sync once it has stopped: the file system's journal included.
#
#   idle     the kiosk in credentials mode waiting on its camera (a FIFO nobody writes) for
#            IDLE_S seconds, stats every KIOSK_STATS_S (60), the metrics file where METRICS says
#   plain    N plain codes (no verdict) replayed
#   grants   N one-time credentials (a cti each) granted, the store prefilled with PREFILL entries
#
# Usage: harness/bench-writes/run.sh [PHASE...]   (default: idle plain grants)
#   KIOSK=path      the kiosk to measure (default: this tree's release build)
#   LABEL=text      its name in the output (default: after)
#   METRICS=state|run   the metrics file in the state directory (/var/lib/kiosk/kiosk.prom, what the
#                   example said before issue 45) or in RAM (/run/kiosk/kiosk.prom: the example now)
#   IDLE_S=120 N=1000 PREFILL=9000
#   FRAMES=dir      keep the frames and the bench's issuer key there, for the next run (before/after)
# Needs root (losetup, mount), qrencode, and the tests' Python peers (make peers) for the
# credentials. One line per phase: `bench-writes LABEL PHASE bytes=B per=...`.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
KIOSK=${KIOSK:-$root/.build/release/kiosk}
LABEL=${LABEL:-after}
METRICS=${METRICS:-run}
IDLE_S=${IDLE_S:-120}
N=${N:-1000}
PREFILL=${PREFILL:-9000}
PY=${KIOSK_PEERS_PYTHON:-$root/.cache/peers/bin/python}
phases=("$@")
[ ${#phases[@]} -gt 0 ] || phases=(idle plain grants)

[ "$(id -u)" = 0 ] || { echo "bench-writes: needs root (losetup, mount)"; exit 1; }
[ -x "$KIOSK" ] || { echo "bench-writes: no kiosk at $KIOSK (make release)"; exit 1; }
command -v qrencode >/dev/null || { echo "bench-writes: needs qrencode (apt-get install qrencode)"; exit 1; }

work=$(mktemp -d /tmp/kiosk-bench-writes.XXXXXX)
mnt=$work/mnt
runtime=$(mktemp -d /dev/shm/kiosk-bench-run.XXXXXX)
cache=${FRAMES:-$work}
mkdir -p "$mnt" "$cache/trust"
truncate -s 256M "$work/state.img"
loop=$(losetup -f --show "$work/state.img")
dev=${loop#/dev/}
cleanup() {
    mountpoint -q "$mnt" && umount "$mnt"
    losetup -d "$loop" 2>/dev/null || true
    if [ -n "${KEEP:-}" ]; then echo "bench-writes: kept $work"; else rm -rf "$work"; fi; rm -rf "$runtime"
}
trap cleanup EXIT

fresh() {
    mountpoint -q "$mnt" && umount "$mnt"
    mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$loop"
    mount -o noatime "$loop" "$mnt"
    mkdir -p "$mnt/kiosk"
}
written() { sync; awk '{ print $7 * 512 }' "/sys/block/$dev/stat"; }

base_env=(PATH=/usr/bin:/bin STATE_DIRECTORY="$mnt/kiosk" KIOSK_ROI=0,0,1,1 KIOSK_REPEAT_MS=0 KIOSK_GPIO_CHIP=sim KIOSK_LOG_LEVEL=info)
cred_env=(KIOSK_VERDICT=credentials KIOSK_TRUST_DIR="$cache/trust" KIOSK_REVOKED_FILE="$work/revoked" KIOSK_REQUIRE_SYNCED_CLOCK=0
          KIOSK_DOOR_LINE=5 KIOSK_DOOR_MS=100)
touch "$work/revoked"
[ -f "$cache/bench.key" ] || "$PY" "$root/Tests/Peers/credentials.py" <<< "{\"op\": \"keygen\", \"alg\": \"ES256\", \"private\": \"$cache/bench.key\", \"public\": \"$cache/trust/bench.pem\"}" > /dev/null

report() {  # phase bytes count what
    local per=""
    [ "$3" -gt 0 ] && per=" per_$4=$(( $2 / $3 ))"
    echo "bench-writes $LABEL $1 bytes=$2$per log_bytes=$(wc -c < "$work/$1.log")$( [ "$3" -gt 0 ] && echo " log_bytes_per_$4=$(( $(wc -c < "$work/$1.log") / $3 ))")"
}

# The frames of SRC fed through FIFOs, a code only once the kiosk has answered the one before
# (a replay is otherwise read as fast as the kiosk asks, and a slow store would fill the
# verifier's queue: `verifier busy`).
paced() {  # name src
    rm -rf "$work/$1-fifo" "$work/$1.log"
    "$PY" "$here/frames.py" feed "$2" "$work/$1-fifo" "$work/$1.log" > "$work/$1-feeder.out" &
    feeder=$!
    until grep -q ready "$work/$1-feeder.out" 2>/dev/null; do sleep 0.1; done
}

for phase in "${phases[@]}"; do
    case $phase in
    idle)
        # A camera that sees no code: FPS empty frames a second through FIFOs (the frame loop,
        # which also writes the stats, runs as on a door).
        fps=5
        rm -rf "$work/idle-frames"
        "$PY" "$here/frames.py" idle "$work/idle-frames" $(( (IDLE_S + 10) * fps )) $fps > "$work/feeder.out" &
        feeder=$!
        until grep -q ready "$work/feeder.out" 2>/dev/null; do sleep 0.2; done
        fresh
        metrics=$([ "$METRICS" = state ] && echo "$mnt/kiosk/kiosk.prom" || echo "$runtime/kiosk.prom")
        a=$(written)
        env -i "${base_env[@]}" "${cred_env[@]}" KIOSK_CAMERA="replay:$work/idle-frames" KIOSK_STATS_S=60 \
            KIOSK_METRICS_FILE="$metrics" "$KIOSK" run 2> "$work/idle.log" &
        pid=$!
        sleep "$IDLE_S"
        kill -TERM "$pid"; wait "$pid" || true
        kill "$feeder" 2>/dev/null || true; wait "$feeder" 2>/dev/null || true
        b=$(written)
        report idle $((b - a)) 0 ""
        echo "bench-writes $LABEL idle seconds=$IDLE_S metrics=$METRICS stats_lines=$(grep -c 'event=stats' "$work/idle.log" || true) per_hour_extrapolated=$(( (b - a) * 3600 / IDLE_S ))"
        ;;
    plain)
        [ -d "$cache/plain-$N" ] || "$PY" "$here/frames.py" plain "$cache/plain-$N" "$N"
        fresh
        a=$(written)
        paced plain "$cache/plain-$N"
        env -i "${base_env[@]}" KIOSK_CAMERA="replay:$work/plain-fifo" KIOSK_STATS_S=0 "$KIOSK" run 2> "$work/plain.log" || true
        wait "$feeder" || true
        b=$(written)
        scans=$(grep -c 'event=scan ' "$work/plain.log" || true)
        report plain $((b - a)) "$N" scan
        echo "bench-writes $LABEL plain scans_logged=$scans"
        ;;
    grants)
        [ -d "$cache/grants-$N" ] || "$PY" "$here/frames.py" grants "$cache/grants-$N" "$N" "$cache/bench.key" "$root/Tests/Peers/credentials.py"
        fresh
        "$PY" "$here/frames.py" prefill "$mnt/kiosk/used-tokens" "$PREFILL"
        a=$(written)
        paced grants "$cache/grants-$N"
        env -i "${base_env[@]}" "${cred_env[@]}" KIOSK_CAMERA="replay:$work/grants-fifo" KIOSK_STATS_S=0 "$KIOSK" run 2> "$work/grants.log" || true
        wait "$feeder" || true
        b=$(written)
        valid=$(grep -c 'event=credential .*reason=valid' "$work/grants.log" || true)
        report grants $((b - a)) "$N" grant
        echo "bench-writes $LABEL grants valid=$valid store_files=$(cd "$mnt/kiosk" && for f in used-tokens*; do printf '%s:%s ' "$f" "$(stat -c %s "$f")"; done)"
        ;;
    *) echo "bench-writes: no phase $phase (idle, plain, grants)"; exit 2 ;;
    esac
done
