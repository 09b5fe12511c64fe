#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Home Assistant core from PyPI in a venv of the trixie root (its Python 3.13: bookworm's 3.11
# cannot run it), run inside the root by harness/ha/run.sh (harness/trixie/run.sh -- ...).
#
#   install.sh VENV VERSION CACHE    make VENV with homeassistant==VERSION and the requirements of
#                                    what the tier loads, unless VENV/.done already names them
#   install.sh --wanted VERSION      what VENV/.done says when it has them (run.sh, on the host)
#
# uv resolves it (pip cannot override a pin): the release pins lru-dict 1.3.0, which has no wheel
# for Python 3.13 and the root has no Python headers to build it, so the override takes lru-dict
# 1.4.1, the next release, the same API. What has only a source archive (pyric, pure Python) is
# built from it. CACHE is uv's cache (harness/ha/run.sh keeps it in the repository's .cache/ha).
set -euo pipefail
if [ "$1" = --wanted ]; then VENV="" VERSION=$2 CACHE=""; else VENV=$1 VERSION=$2 CACHE=$3; fi
PAHO=paho-mqtt==2.1.0  # homeassistant/components/mqtt/manifest.json's requirement in $VERSION (checked below)
# The integrations the tier's configuration loads (harness/ha/configuration.yaml) and the frontend,
# without which Home Assistant starts in recovery mode.
DOMAINS="frontend mqtt tag automation http"
want="homeassistant==$VERSION $PAHO ($DOMAINS)"
if [ "$1" = --wanted ]; then echo "$want"; exit 0; fi
if [ "$(cat "$VENV/.done" 2>/dev/null)" = "$want" ]; then echo "ha install: $VENV has $want"; exit 0; fi
rm -rf "$VENV"
python3 -m venv "$VENV"
# The system's certificates (a site's TLS proxy, added to the root by harness/trixie/run.sh).
export UV_CACHE_DIR=$CACHE PIP_CACHE_DIR=$CACHE/pip UV_NATIVE_TLS=1
"$VENV/bin/pip" install -q --disable-pip-version-check uv==0.9.26
echo "lru-dict==1.4.1" > "$VENV/overrides.txt"
uv() { "$VENV/bin/uv" pip install --python "$VENV/bin/python" --override "$VENV/overrides.txt" --compile-bytecode "$@"; }
uv "homeassistant==$VERSION" "$PAHO"
# With --skip-pip Home Assistant installs nothing itself: the requirements of $DOMAINS and of
# their dependencies, as this release's manifests pin them.
"$VENV/bin/python" - "$PAHO" $DOMAINS > "$VENV/requirements.txt" <<'ZZREQ'
import json, os, sys
import homeassistant.components as c
seen, todo, req = set(), list(sys.argv[2:]), set()
while todo:
    d = todo.pop()
    if d in seen:
        continue
    seen.add(d)
    m = json.load(open(os.path.join(os.path.dirname(c.__file__), d, "manifest.json")))
    req.update(m.get("requirements", []))
    todo += m.get("dependencies", [])
if sys.argv[1] not in req:
    sys.exit(f"ha install: the mqtt integration does not want {sys.argv[1]}: {sorted(req)}")
print("\n".join(sorted(req)))
ZZREQ
echo "ha install: the integrations' requirements: $(tr '\n' ' ' < "$VENV/requirements.txt")"
uv -r "$VENV/requirements.txt"
echo "$want" > "$VENV/.done"
echo "ha install: $VENV has $want"
