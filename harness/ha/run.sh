#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# make test-ha: a real Home Assistant core process (PyPI, in a venv of the trixie root: Debian 12's
# Python 3.11 cannot run it) against a real Mosquitto on this host and a live release kiosk
# publishing to it with discovery (harness/ha/check.py: the scene and its checks).
#
#   harness/ha/run.sh --kiosk KIOSK
#
# The venv is kept in the root (/opt/ha-VERSION) and made anew only when the pin changes; uv's
# cache is kept in .cache/ha/uv, so that a new root installs it again without the network's
# wait. Each run: a fresh config folder (harness/ha/configuration.yaml and the MQTT integration's
# config entry), Mosquitto on a free loopback port (the root shares the host's network), a
# subscriber logging every message. Logs in .cache/ha. Ends with "N passed, M failed"; exit 0
# only when nothing failed; Home Assistant not installable is a FAIL, never a skip.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
HA_VERSION=2026.2.3  # the newest release for Python 3.13 (2026.3 wants 3.14.2)
OUT=$REPO/.cache/ha
PY=${KIOSK_PEERS_PYTHON:-$REPO/.cache/peers/bin/python}
KIOSK=""
case "${1:-}" in --kiosk) KIOSK=$2 ;; *) echo "usage: $0 --kiosk KIOSK"; exit 64 ;; esac

t_start=$(date +%s)
passed=0 failed=0
result() {  # result OK|NO TEXT
  if [ "$1" = OK ]; then echo "PASS ha: $2"; passed=$((passed + 1)); else echo "FAIL ha: $2"; failed=$((failed + 1)); fi
}
finish() { echo "ha: $(( $(date +%s) - t_start )) s"; echo "$passed passed, $failed failed"; [ "$failed" = 0 ]; exit; }

[ -x "$KIOSK" ] || { result NO "no kiosk at $KIOSK (make release)"; finish; }
[ -x "$PY" ] || { result NO "no peers' python at $PY (make peers)"; finish; }
for c in mosquitto mosquitto_sub mosquitto_pub qrencode; do
  command -v $c >/dev/null || { result NO "$c is not installed (the Makefile's HA_PACKAGES)"; finish; }
done
rm -rf "$OUT/run" && mkdir -p "$OUT/run" "$OUT/uv"

# --- Home Assistant in the trixie root -------------------------------------------------------------
ROOT=$("$REPO/harness/trixie/run.sh" --root | tail -1) || true
[ -d "$ROOT" ] || { result NO "no trixie root ($ROOT)"; finish; }
VENV=/opt/ha-$HA_VERSION
t0=$(date +%s)
if [ "$(cat "$ROOT$VENV/.done" 2>/dev/null)" != "$("$HERE/install.sh" --wanted "$HA_VERSION")" ]; then
  # An older pin's venv goes (about 900 MB each).
  rm -rf "$ROOT"/opt/ha-* "$ROOT/var/cache/kiosk-ha-uv" && mkdir -p "$ROOT/var/cache/kiosk-ha-uv"
  # Hard links when the root is on the same file system (uv only reads its cache's files).
  cp -al "$OUT/uv/." "$ROOT/var/cache/kiosk-ha-uv/" 2>/dev/null || cp -a "$OUT/uv/." "$ROOT/var/cache/kiosk-ha-uv/"
  if "$REPO/harness/trixie/run.sh" -- harness/ha/install.sh "$VENV" "$HA_VERSION" /var/cache/kiosk-ha-uv > "$OUT/install.log" 2>&1; then
    rm -rf "$OUT/uv" && mv "$ROOT/var/cache/kiosk-ha-uv" "$OUT/uv"
    result OK "Home Assistant $HA_VERSION installed from PyPI in the trixie root's $VENV ($(( $(date +%s) - t0 )) s)"
  else
    tail -20 "$OUT/install.log" | sed 's/^/  | /'
    result NO "Home Assistant $HA_VERSION could not be installed (log: $OUT/install.log)"; finish
  fi
else
  result OK "Home Assistant $HA_VERSION in the trixie root's $VENV ($(cat "$ROOT$VENV/.done"))"
fi

free_port() { "$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
PIDS=()
CONF=/var/tmp/kiosk-ha
# The last run's folder (and its hass.pid) gone before the trap could read it.
rm -rf "${ROOT:?}$CONF"
cleanup() {
  # Home Assistant first (it stops within its own shutdown's time), then the rest.
  if [ -s "$ROOT$CONF/hass.pid" ]; then
    local hp; hp=$(cat "$ROOT$CONF/hass.pid")
    kill -TERM "$hp" 2>/dev/null || true
    for _ in $(seq 1 300); do kill -0 "$hp" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$hp" 2>/dev/null || true
  fi
  local p
  for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  cp "$ROOT$CONF/home-assistant.log" "$OUT/home-assistant.log" 2>/dev/null || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- Mosquitto on a free loopback port, and every message it carries into broker.log ------------------
PORT=$(free_port)
printf 'listener %s 127.0.0.1\nallow_anonymous true\npersistence false\n' "$PORT" > "$OUT/run/mosquitto.conf"
mosquitto -c "$OUT/run/mosquitto.conf" > "$OUT/mosquitto.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 1 50); do mosquitto_pub -h 127.0.0.1 -p "$PORT" -t kiosk-ha/up -m 1 2>/dev/null && break; sleep 0.1; done
mosquitto_sub -h 127.0.0.1 -p "$PORT" -v -t '#' > "$OUT/broker.log" 2>&1 &
PIDS+=($!)

# --- A fresh config folder: the tier's configuration, the MQTT integration's entry, an HTTP port --------
mkdir -p "$ROOT$CONF/.storage"
HTTP_PORT=$(free_port)
{ cat "$HERE/configuration.yaml"; printf '\n# harness/ha/run.sh: a free port (another run may be on 8123)\nhttp:\n  server_host: 127.0.0.1\n  server_port: %s\n' "$HTTP_PORT"; } \
  > "$ROOT$CONF/configuration.yaml"
"$PY" - "$PORT" "$ROOT$CONF/.storage/core.config_entries" <<'ZZPY'
import json, sys, time
# As the MQTT integration's config flow stores it (homeassistant/config_entries.py ConfigEntry.as_dict;
# the MQTT entry written as version 1.2, broker in data, discovery in options).
now = time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime())
entry = {"created_at": now, "modified_at": now, "data": {"broker": "127.0.0.1", "port": int(sys.argv[1])},
         "options": {"discovery": True, "discovery_prefix": "homeassistant"}, "discovery_keys": {}, "disabled_by": None,
         "domain": "mqtt", "entry_id": "01KIOSKHAMQTT0000000000000", "minor_version": 2, "version": 1,
         "pref_disable_new_entities": False, "pref_disable_polling": False, "source": "user", "subentries": [],
         "title": "127.0.0.1", "unique_id": None}
json.dump({"version": 1, "minor_version": 5, "key": "core.config_entries", "data": {"entries": [entry]}}, open(sys.argv[2], "w"), indent=1)
ZZPY

t0=$(date +%s)
"$REPO/harness/trixie/run.sh" -- /bin/bash -c "echo \$\$ > $CONF/hass.pid; exec nice -n 5 $VENV/bin/python -m homeassistant --config $CONF --skip-pip --log-file $CONF/home-assistant.log" \
  > "$OUT/hass.out" 2>&1 &
PIDS+=($!)

"$PY" "$HERE/check.py" --kiosk "$KIOSK" --port "$PORT" --broker-log "$OUT/broker.log" --ha-log "$ROOT$CONF/home-assistant.log" \
  --out "$OUT/run" | tee "$OUT/check.out" || true
passed=$((passed + $(grep -c '^PASS' "$OUT/check.out" || true)))
failed=$((failed + $(grep -c '^FAIL' "$OUT/check.out" || true)))
grep -qE '^(PASS|FAIL) ha: the kiosk stopped' "$OUT/check.out" || result NO "the scene did not reach its end (check.py: $OUT/check.out)"
# Home Assistant's own word on what the kiosk sent: no warning or error in its log but the two a
# venv without Home Assistant OS always gives (--skip-pip; no zlib_ng or isal wheels).
if grep -E " (WARNING|ERROR|CRITICAL) " "$ROOT$CONF/home-assistant.log" \
    | grep -vE "Skipping pip installation of required modules|\[aiohttp_fast_zlib\] zlib_ng and isal are not available" > "$OUT/ha-warnings.log"; then
  cut -c1-300 "$OUT/ha-warnings.log" | sort -u -k5 | head -5 | sed 's/^/  | /'
  result NO "Home Assistant warned ($(wc -l < "$OUT/ha-warnings.log") lines in $OUT/ha-warnings.log)"
else
  result OK "no warning or error in home-assistant.log (but --skip-pip's and zlib's)"
fi
echo "ha: Home Assistant ran $(( $(date +%s) - t0 )) s"
finish
