#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# journald's share of what the card is written (issue 45): the kiosk's log as the unit sends it
# (stderr a journal stream, JOURNAL_STREAM set, so the kiosk sends native entries), received by
# Debian's own systemd-journald with Storage=persistent (Raspberry Pi OS keeps its journal in
# /var/log/journal) on an ext4 file system of its own on a loop device; the bytes are that
# device's count of written sectors (as harness/bench-writes/run.sh counts the state's), from a
# sync after journald started to a sync after it stopped (it syncs and closes its files at
# SIGTERM). journald runs in a private mount namespace (unshare -m): its /run and
# /var/log/journal are its own, the host's journal, /dev/log and /run/systemd are untouched.
#
#   harness/bench-writes/journald.sh [PHASE...]   (default: idle grants)
#     idle     the kiosk idle IDLE_S seconds (300), a stats line every 60 s
#     grants   N one-time credentials (1000) granted as fast as the kiosk answers
#     spaced   S grants (10), GAP_S seconds (40: longer than the kernel's 30 s before it writes back
#              a dirty page) between two, as a quiet door grants them
# KIOSK=path (this tree's release kiosk). Needs root, qrencode, the tests' peers (make peers).
# One line a phase: `journald PHASE bytes=B per_...= entries=E`.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
KIOSK=${KIOSK:-$root/.build/release/kiosk}
IDLE_S=${IDLE_S:-300} N=${N:-1000} S=${S:-10} GAP_S=${GAP_S:-40}
PY=${KIOSK_PEERS_PYTHON:-$root/.cache/peers/bin/python}
JOURNALD=/lib/systemd/systemd-journald
phases=("$@")
[ ${#phases[@]} -gt 0 ] || phases=(idle grants)
for p in "${phases[@]}"; do case $p in idle|grants|spaced) ;; *) echo "journald.sh: no phase $p (idle, grants, spaced)" >&2; exit 2 ;; esac; done

[ "$(id -u)" = 0 ] || { echo "journald.sh: needs root (unshare, losetup, mount)" >&2; exit 1; }
[ -x "$KIOSK" ] || { echo "journald.sh: no kiosk at $KIOSK (make release)" >&2; exit 1; }
[ -x "$JOURNALD" ] && command -v systemd-cat journalctl >/dev/null || { echo "journald.sh: needs Debian's systemd (systemd-journald, systemd-cat, journalctl)" >&2; exit 1; }
command -v qrencode >/dev/null || { echo "journald.sh: needs qrencode (apt-get install qrencode)" >&2; exit 1; }
# The rest in a mount namespace of its own.
[ -n "${KIOSK_JOURNALD_NS:-}" ] || exec unshare -m --propagation private env KIOSK_JOURNALD_NS=1 "$0" "$@"

work=$(mktemp -d /tmp/kiosk-bench-journald.XXXXXX)
state=$work/state
mkdir -p "$state" "$work/trust"
truncate -s 256M "$work/journal.img"
loop=$(losetup -f --show "$work/journal.img")
dev=${loop#/dev/}
jpid=
cleanup() {
    [ -z "$jpid" ] || { kill "$jpid" 2>/dev/null; wait "$jpid" 2>/dev/null || true; }
    umount /var/log/journal 2>/dev/null || true
    losetup -d "$loop" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
mount -t tmpfs -o mode=0755 tmpfs /run
mkdir -p /run/systemd/journal /var/log/journal
# Debian's defaults but for what would reach the host: no kernel messages, no forwarding.
printf '[Journal]\nStorage=persistent\nReadKMsg=no\nForwardToSyslog=no\nForwardToWall=no\nForwardToConsole=no\n' >"$work/journald.conf"
mount --bind "$work/journald.conf" /etc/systemd/journald.conf
[ ! -d /etc/systemd/journald.conf.d ] || mount -t tmpfs tmpfs /etc/systemd/journald.conf.d
written() { sync; awk '{ print $7 * 512 }' "/sys/block/$dev/stat"; }

[ -f "$work/bench.key" ] || "$PY" "$root/Tests/Peers/credentials.py" <<< "{\"op\": \"keygen\", \"alg\": \"ES256\", \"private\": \"$work/bench.key\", \"public\": \"$work/trust/bench.pem\"}" >/dev/null
env_=(PATH=/usr/bin:/bin STATE_DIRECTORY="$state" KIOSK_ROI=0,0,1,1 KIOSK_REPEAT_MS=0 KIOSK_LOG_LEVEL=info
      KIOSK_VERDICT=credentials KIOSK_TRUST_DIR="$work/trust" KIOSK_REQUIRE_SYNCED_CLOCK=0 KIOSK_METRICS_FILE="$work/kiosk.prom")

# fresh: a new file system for the journal and a new journald on it; BEFORE its bytes so far.
fresh() {
    [ -z "$jpid" ] || { kill "$jpid"; wait "$jpid" || true; }
    umount /var/log/journal 2>/dev/null || true
    mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$loop"
    mount -o noatime "$loop" /var/log/journal
    rm -rf "${state:?}"/* /run/systemd/journal/*
    "$JOURNALD" &
    jpid=$!
    until [ -S /run/systemd/journal/stdout ] && [ -S /run/systemd/journal/socket ]; do sleep 0.1; done
    # What systemd-journal-flush.service does at boot: from /run/log/journal to /var/log/journal.
    kill -USR1 "$jpid"
    systemd-cat -t bench echo "journald.sh: a fresh journal"
    until [ -n "$(find /var/log/journal -name system.journal)" ]; do sleep 0.1; done
    sleep 1
    BEFORE=$(written)
}
# kiosk LOG VAR=VALUE...: the kiosk run as the unit runs it: stderr a journal stream
# (systemd-cat), JOURNAL_STREAM naming it; its pid in $work/kiosk.pid; what journald keeps of it
# copied to LOG as it comes.
kiosk() {
    local log=$1; shift
    : >"$log"
    journalctl -D /var/log/journal -f -n all -o cat -t kiosk >"$log" 2>/dev/null &
    local tail=$!
    systemd-cat -t kiosk -- sh -c 'echo $$ >"$0"; JOURNAL_STREAM=$(stat -L -c %d:%i /proc/self/fd/2) exec env -i JOURNAL_STREAM="$JOURNAL_STREAM" "$@"' "$work/kiosk.pid" \
        "${env_[@]}" "$@" "$KIOSK" run || true
    sleep 2
    kill "$tail" 2>/dev/null; wait "$tail" 2>/dev/null || true
}
# done_ PHASE COUNT WHAT: journald stopped (it syncs its files), the bytes reported.
done_() {
    kill "$jpid"; wait "$jpid" || true; jpid=
    local b entries
    b=$(( $(written) - BEFORE ))
    entries=$(journalctl -D /var/log/journal -o cat -t kiosk 2>/dev/null | wc -l)
    echo "journald $1 bytes=$b$( [ "$2" -gt 0 ] && echo " per_$3=$(( b / $2 ))") entries=$entries journal_files=$(du -sb /var/log/journal | cut -f1)"
}

for phase in "${phases[@]}"; do
    case $phase in
    idle)
        rm -rf "$work/idle-frames"
        "$PY" "$here/frames.py" idle "$work/idle-frames" $(( (IDLE_S + 10) * 5 )) 5 >"$work/feeder.out" &
        feeder=$!
        until grep -q ready "$work/feeder.out" 2>/dev/null; do sleep 0.2; done
        fresh
        rm -f "$work/kiosk.pid"
        ( sleep "$IDLE_S"; kill -TERM "$(cat "$work/kiosk.pid")" ) &
        kiosk "$work/idle.log" KIOSK_CAMERA="replay:$work/idle-frames" KIOSK_STATS_S=60
        kill "$feeder" 2>/dev/null || true; wait "$feeder" 2>/dev/null || true
        done_ idle 0 ""
        echo "journald idle seconds=$IDLE_S stats_lines=$(grep -c 'event=stats' "$work/idle.log" || true)"
        ;;
    grants|spaced)
        count=$N; [ "$phase" = spaced ] && count=$S
        [ -d "$work/grants-$count" ] || "$PY" "$here/frames.py" grants "$work/grants-$count" "$count" "$work/bench.key" "$root/Tests/Peers/credentials.py"
        fresh
        rm -rf "$work/fifo"
        gap=0; [ "$phase" = spaced ] && gap=$GAP_S
        FEED_GAP_S=$gap "$PY" "$here/frames.py" feed "$work/grants-$count" "$work/fifo" "$work/$phase.log" >"$work/feeder.out" &
        feeder=$!
        until grep -q ready "$work/feeder.out" 2>/dev/null; do sleep 0.1; done
        kiosk "$work/$phase.log" KIOSK_CAMERA="replay:$work/fifo" KIOSK_STATS_S=0
        wait "$feeder" || true
        done_ "$phase" "$count" grant
        echo "journald $phase granted=$(grep -c 'event=credential .*reason=valid' "$work/$phase.log" || true) log_text_bytes=$(wc -c <"$work/$phase.log")"
        ;;
    esac
done
