#!/usr/bin/env bash
# Installs the kiosk on this machine as a systemd service: builds a release binary, creates the
# `kiosk` user in the video and gpio groups, installs the unit and /etc/default/kiosk (kept if
# it exists). Run from the repository as root: deploy/install.sh
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "install.sh: run as root" >&2; exit 1; }
make release
bin=$(swift build -c release --show-bin-path)/kiosk
install -D -m 0755 "$bin" /usr/local/bin/kiosk
install -D -m 0644 README.md /usr/local/share/doc/kiosk/README.md
for g in video gpio; do getent group "$g" >/dev/null || groupadd --system "$g"; done
id kiosk >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin --groups video,gpio kiosk
[ -e /etc/default/kiosk ] || install -m 0644 deploy/kiosk.default /etc/default/kiosk
install -m 0644 deploy/kiosk.service /etc/systemd/system/kiosk.service
if [ -d /run/systemd/system ]; then
  systemctl daemon-reload
  echo "installed; start with: systemctl enable --now kiosk && journalctl -u kiosk -f"
else
  echo "installed (systemd is not running here: enable the unit on the kiosk itself)"
fi
