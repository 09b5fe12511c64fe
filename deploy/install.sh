#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs the kiosk on this machine as a systemd service, or stages it under DESTDIR.
#
#   sudo deploy/install.sh                    build (release, Swift runtime linked in) and install
#   sudo deploy/install.sh --binary PATH      install a binary built before (e.g. on another Pi)
#   sudo deploy/install.sh --no-start         install and enable, but do not (re)start
#   sudo deploy/install.sh --uninstall        remove binary, unit and doc; keep /etc/default/kiosk
#   sudo deploy/install.sh --uninstall --purge   ... and /etc/default/kiosk and /var/lib/kiosk
#   DESTDIR=/tmp/stage deploy/install.sh --binary PATH   stage the files only (no root needed)
#
# What it installs (PREFIX=/usr/local unless set):
#   $PREFIX/bin/kiosk, $PREFIX/share/doc/kiosk/{README.md,docs/*.md}, the manual pages
#   $PREFIX/share/man/man8/kiosk.8.gz and man5/kiosk.conf.5.gz (`man kiosk` finds them: man-db
#   reads /usr/local/share/man), /etc/systemd/system/kiosk.service
#   (ExecStart pointed at $PREFIX/bin/kiosk), /etc/default/kiosk from deploy/kiosk.env, never
#   overwriting an existing one; /etc/systemd/system/kiosk.service.d/mqtt.conf (the network for
#   the broker) when /etc/default/kiosk sets KIOSK_MQTT_URL, removed when it does not.
# On the machine itself (DESTDIR empty) it also installs the runtime Debian packages, creates the
# `kiosk` system user in the `video` and `gpio` groups (creating the groups when missing) and, when
# systemd is running, enables the service and starts it (restarts it when a file changed).
# With DESTDIR set it does none of these three: no apt-get, no user or group, no systemctl.
# Idempotent: a file whose content is already in place is not touched; running it twice changes
# nothing the second time. The `kiosk` user is kept on --uninstall, even with --purge (Debian's
# custom: files may still belong to it); remove it by hand with `userdel kiosk` if you wish.
set -euo pipefail

# The libraries the binary links, by their Debian names on each release (trixie renamed some for
# the 64-bit time_t transition, and ships libgpiod v2 as libgpiod3).
. /etc/os-release 2>/dev/null || true
case "${VERSION_CODENAME:-}" in
  bookworm) RUNTIME_PACKAGES="libzbar0 libv4l-0 libgpiod2 libpng16-16 libqrencode4 libsystemd0 libzxing2 libmosquitto1" ;;
  *) RUNTIME_PACKAGES="libzbar0t64 libv4l-0t64 libgpiod3 libpng16-16t64 libqrencode4 libsystemd0 libzxing3 libmosquitto1" ;;
esac
DESTDIR=${DESTDIR:-}
PREFIX=${PREFIX:-/usr/local}
binary=${KIOSK_BINARY:-}
mode=install
purge=0
start=1

usage() { sed -n '2,9s/^# \{0,1\}//p' "$0"; }
while [ $# -gt 0 ]; do
  case "$1" in
    --binary) binary=${2:?--binary needs a path}; shift 2 ;;
    --binary=*) binary=${1#--binary=}; shift ;;
    --uninstall) mode=uninstall; shift ;;
    --purge) purge=1; shift ;;
    --no-start) start=0; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "install.sh: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
  esac
done
[ "$purge" = 0 ] || [ "$mode" = uninstall ] || { echo "install.sh: --purge goes with --uninstall" >&2; exit 2; }

repo=$(cd "$(dirname "$0")/.." && pwd)
if [ -z "$DESTDIR" ]; then
  [ "$(id -u)" = 0 ] || { echo "install.sh: run as root (or set DESTDIR to stage the files)" >&2; exit 1; }
else
  case "$DESTDIR" in /*) ;; *) DESTDIR=$(pwd)/$DESTDIR ;; esac
  echo "install.sh: staging under DESTDIR=$DESTDIR (no packages, no user, no systemctl)"
fi

bin_path=$PREFIX/bin/kiosk
unit_path=/etc/systemd/system/kiosk.service
setup_units="/etc/systemd/system/kiosk-setup.path /etc/systemd/system/kiosk-setup.service"
doc_dir=$PREFIX/share/doc/kiosk
man_pages="$PREFIX/share/man/man8/kiosk.8.gz $PREFIX/share/man/man5/kiosk.conf.5.gz"
plugin_dir=$PREFIX/share/kiosk/libcamera-plugin
env_path=/etc/default/kiosk
state_dir=/var/lib/kiosk
dropin_path=/etc/systemd/system/kiosk.service.d/mqtt.conf
changed=0
systemd_up() { [ -z "$DESTDIR" ] && [ -d /run/systemd/system ]; }

# put SOURCE TARGET MODE: install SOURCE as $DESTDIR/TARGET unless the same bytes and mode are there.
put() {
  local src=$1 dst=$DESTDIR$2 m=$3
  if [ -f "$dst" ] && cmp -s "$src" "$dst" && [ "$(stat -c %a "$dst")" = "$m" ]; then
    echo "  unchanged  $2"
  else
    install -D -m "$m" "$src" "$dst"
    echo "  installed  $2"
    changed=1
  fi
}

# remove TARGET: delete $DESTDIR/TARGET when present.
remove() {
  if [ -e "$DESTDIR$1" ] || [ -L "$DESTDIR$1" ]; then
    rm -rf -- "$DESTDIR$1"
    echo "  removed    $1"
  fi
}

if [ "$mode" = uninstall ]; then
  if systemd_up; then
    systemctl disable --now kiosk.service kiosk-setup.path 2>/dev/null || true
  fi
  remove "$bin_path"
  remove "$unit_path"
  for u in $setup_units; do remove "$u"; done
  remove "$dropin_path"
  rmdir "$DESTDIR${dropin_path%/*}" 2>/dev/null || true
  remove "$doc_dir"
  for m in $man_pages; do remove "$m"; done
  remove "$plugin_dir"
  remove "$PREFIX/share/kiosk/mqtt.conf"
  rmdir "$DESTDIR$PREFIX/share/kiosk" 2>/dev/null || true
  if [ "$purge" = 1 ]; then
    remove "$env_path"
    remove "$state_dir"
  elif [ -e "$DESTDIR$env_path" ]; then
    echo "  kept       $env_path (--purge removes it)"
  fi
  if systemd_up; then
    systemctl daemon-reload
    systemctl reset-failed kiosk.service 2>/dev/null || true
  fi
  [ -n "$DESTDIR" ] || ! id kiosk >/dev/null 2>&1 || echo "  kept       user kiosk (userdel kiosk removes it)"
  echo "install.sh: uninstalled"
  exit 0
fi

# 1. Runtime libraries (on the machine only).
if [ -z "$DESTDIR" ]; then
  missing=""
  for p in $RUNTIME_PACKAGES; do
    dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' || missing="$missing $p"
  done
  if [ -n "$missing" ]; then
    echo "install.sh: installing$missing"
    apt-get update -q
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $missing
  fi
fi

# 2. The binary: given, or a release build with the Swift runtime linked in (no /opt/swift at run time).
if [ -z "$binary" ]; then
  echo "install.sh: building (make release)"
  make -C "$repo" release >&2
  binary=$(cd "$repo" && PATH=$PATH:/opt/swift/usr/bin swift build -c release --static-swift-stdlib --show-bin-path)/kiosk
fi
[ -x "$binary" ] || { echo "install.sh: no executable binary at '$binary'" >&2; exit 1; }
"$binary" --version >/dev/null || { echo "install.sh: '$binary --version' failed" >&2; exit 1; }
# Stripped: a third of the size on the SD card; the build folder keeps the symbols.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp "$binary" "$tmp/kiosk"
strip --strip-unneeded "$tmp/kiosk" 2>/dev/null || echo "install.sh: strip failed, installing unstripped" >&2
sed -e "s|^ExecStart=/usr/local/bin/kiosk|ExecStart=$bin_path|" \
    -e "s|file:///usr/local/share/doc/kiosk/|file://$doc_dir/|" \
    "$repo/deploy/kiosk.service" > "$tmp/kiosk.service"
# Setup at the door: the path unit watches for the code the kiosk took; the service applies it as root.
sed -e "s|/usr/local/bin/kiosk|$bin_path|" "$repo/deploy/kiosk-setup.service" > "$tmp/kiosk-setup.service"

echo "install.sh: $("$binary" --version | head -1) into ${DESTDIR:-/}"
put "$tmp/kiosk" "$bin_path" 755
put "$tmp/kiosk.service" "$unit_path" 644
put "$repo/deploy/kiosk-setup.path" /etc/systemd/system/kiosk-setup.path 644
put "$tmp/kiosk-setup.service" /etc/systemd/system/kiosk-setup.service 644
put "$repo/README.md" "$doc_dir/README.md" 644
for f in "$repo"/docs/*.md; do put "$f" "$doc_dir/docs/${f##*/}" 644; done
# The manual pages, gzipped reproducibly (-n): the same bytes each run, so a second run changes nothing.
gzip -9n < "$repo/docs/man/kiosk.8" > "$tmp/kiosk.8.gz"
gzip -9n < "$repo/docs/man/kiosk.conf.5" > "$tmp/kiosk.conf.5.gz"
put "$tmp/kiosk.8.gz" "$PREFIX/share/man/man8/kiosk.8.gz" 644
put "$tmp/kiosk.conf.5.gz" "$PREFIX/share/man/man5/kiosk.conf.5.gz" 644
if [ -e "$DESTDIR$env_path" ]; then
  echo "  kept       $env_path (yours; the current template is $doc_dir/kiosk.env)"
else
  put "$repo/deploy/kiosk.env" "$env_path" 644
fi
put "$repo/deploy/kiosk.env" "$doc_dir/kiosk.env" 644
put "$repo/deploy/mqtt.conf" "$PREFIX/share/kiosk/mqtt.conf" 644
# The network only for a kiosk with a broker: the drop-in follows KIOSK_MQTT_URL (uncommented,
# not empty) in /etc/default/kiosk.
if grep -Eq '^[[:space:]]*(export[[:space:]]+)?KIOSK_MQTT_URL=[^[:space:]#]' "$DESTDIR$env_path" 2>/dev/null; then
  put "$repo/deploy/mqtt.conf" "$dropin_path" 644
elif [ -e "$DESTDIR$dropin_path" ]; then
  remove "$dropin_path"
  rmdir "$DESTDIR${dropin_path%/*}" 2>/dev/null || true
  changed=1
fi
# The libcamera plugin's source, as the package ships it (docs/installing.md, "The camera").
for f in plugins/libcamera/Makefile plugins/libcamera/kiosk_libcamera.cpp plugins/libcamera/lc-probe.c \
         Sources/CLibcamera/include/kiosk_libcamera.h Sources/CLibcamera/loader.c Sources/CPlatform/include/kiosk_dlopen.h; do
  put "$repo/$f" "$plugin_dir/${f##*/}" 644
done

if [ -n "$DESTDIR" ]; then
  echo "install.sh: staged (DESTDIR mode: no packages installed, no user created, systemctl not run)"
  exit 0
fi

# 3. The user and its device groups.
for g in video gpio dialout audio input; do
  getent group "$g" >/dev/null || { groupadd --system "$g"; echo "  created    group $g"; }
done
if ! id kiosk >/dev/null 2>&1; then
  useradd --system --user-group --no-create-home --home-dir /nonexistent \
          --shell /usr/sbin/nologin --comment "kiosk barcode scanner" kiosk
  echo "  created    user kiosk"
fi
for g in video gpio dialout audio input; do
  id -nG kiosk | tr ' ' '\n' | grep -qx "$g" || { usermod -a -G "$g" kiosk; echo "  added      kiosk to group $g"; }
done

# 4. The service.
if systemd_up; then
  systemctl daemon-reload
  systemctl is-enabled --quiet kiosk.service 2>/dev/null || systemctl enable kiosk.service
  systemctl is-enabled --quiet kiosk-setup.path 2>/dev/null || systemctl enable --now kiosk-setup.path
  if [ "$start" = 1 ]; then
    if [ "$changed" = 1 ]; then systemctl restart kiosk.service; else systemctl start kiosk.service; fi
    echo "install.sh: kiosk enabled and started; follow it with: journalctl -u kiosk -f"
  else
    echo "install.sh: kiosk enabled, not started (--no-start): systemctl start kiosk"
  fi
else
  echo "install.sh: installed; systemd is not running here, so the unit is neither enabled nor started"
fi
