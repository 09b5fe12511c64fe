#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Tests of the deployment: the systemd unit, deploy/install.sh (staged under DESTDIR) and the .deb.
#
#   harness/deploy/run.sh [--binary PATH] [--system]
#
# --binary PATH  the release binary to install and package (default: the release build, made
#                here when missing; `make test-deploy` passes it).
# --system       also install for real on this machine and remove again: install.sh (as root,
#                no DESTDIR) and `dpkg -i` of the .deb, then `dpkg --purge`. Leaves the `kiosk`
#                user and the `video`/`gpio` groups behind (as both are documented to). Off by
#                default: it changes the machine.
# Needs: systemd (systemd-analyze), dpkg-dev, lintian, binutils (`make deploy-deps`).
# Prints one PASS/FAIL/SKIP line per check and ends with `N passed, M failed, K skipped`;
# exits 1 when any check failed. KEEP=1 keeps the work folder.
set -uo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
binary=${KIOSK_BINARY:-}
system=0
while [ $# -gt 0 ]; do
  case "$1" in
    --binary) binary=${2:?--binary needs a path}; shift 2 ;;
    --binary=*) binary=${1#--binary=}; shift ;;
    --system) system=1; shift ;;
    *) echo "run.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done

passed=0 failed=0 skipped=0
pass() { echo "PASS $1${2:+: $2}"; passed=$((passed + 1)); }
fail() { echo "FAIL $1${2:+: $2}"; failed=$((failed + 1)); }
# A SKIP fails the tier unless listed in harness/deploy/expected-skips (harness/skips.sh).
. "$(cd "$(dirname "$0")/.." && pwd)/skips.sh"
skips_expected "$(cd "$(dirname "$0")" && pwd)/expected-skips"
# check NAME DETAIL COMMAND...: PASS when COMMAND succeeds; its output is shown on failure.
check() {
  local name=$1 detail=$2 out; shift 2
  if out=$("$@" 2>&1); then pass "$name" "$detail"; else fail "$name" "$detail"; [ -z "$out" ] || sed 's/^/    /' <<<"$out"; fi
}
finish() {
  skips_summary
  echo "$passed passed, $failed failed, $skipped skipped"
  [ "$failed" = 0 ]
  exit $?
}

work=$(mktemp -d /tmp/kiosk-deploy-test.XXXXXX)
if [ "${KEEP:-0}" = 1 ]; then echo "work folder: $work"; else trap 'rm -rf "$work"' EXIT; fi

for tool in systemd-analyze dpkg-deb dpkg-shlibdeps lintian strip; do
  command -v "$tool" >/dev/null || { fail "tools" "$tool missing (make deploy-deps)"; finish; }
done

if [ -z "$binary" ]; then
  export PATH=$PATH:/opt/swift/usr/bin
  binary=$(cd "$repo" && swift build -c release --static-swift-stdlib --show-bin-path)/kiosk
  [ -x "$binary" ] || (cd "$repo" && swift build -c release --static-swift-stdlib --product kiosk >&2)
fi
if [ ! -x "$binary" ]; then fail "binary" "no release binary at $binary"; finish; fi
version=$("$binary" --version | awk 'NR == 1 { print $2 }')
arch=$(dpkg --print-architecture)
echo "testing kiosk $version ($binary) on $arch"

# --- The unit, verified as it lands in a root: systemd-analyze needs the binary of ExecStart and
# the units it refers to (sysinit.target, ...), so the host's /lib/systemd/system is copied beside.
# systemd-analyze exits 0 even on unknown keys: any output at all is a failure.
verify_unit() {  # ROOT [UNIT...]: verify kiosk.service (or the UNITs) inside ROOT; fails on any message
  local root=$1 vroot out
  shift
  [ $# -gt 0 ] || set -- kiosk.service
  vroot=$(mktemp -d "$work/vroot.XXXXXX")
  cp -a "$root/." "$vroot/"
  mkdir -p "$vroot/lib/systemd/system"
  cp -an /lib/systemd/system/. "$vroot/lib/systemd/system/"
  # Documentation=man:kiosk(8) is checked with man: the root's own pages, not the host's.
  out=$(MANPATH=$vroot/usr/local/share/man:$vroot/usr/share/man systemd-analyze verify --root="$vroot" "$@" 2>&1) || { echo "$out"; return 1; }
  [ -z "$out" ] || { echo "$out"; return 1; }
}

unit_has_settings() {  # UNIT: the settings the service relies on are there
  local u=$1 missing="" s
  for s in Type=notify NotifyAccess=main 'EnvironmentFile=-/etc/default/kiosk' 'WatchdogSec=' \
           Restart=on-failure 'RestartSec=' 'StartLimitIntervalSec=' 'StartLimitBurst=' \
           RestartPreventExitStatus=78 User=kiosk 'SupplementaryGroups=video gpio' \
           DevicePolicy=closed 'DeviceAllow=char-video4linux rw' 'DeviceAllow=char-gpiochip rw' \
           'DeviceAllow=char-media rw' 'DeviceAllow=char-dma_heap rw' 'DeviceAllow=char-ttyAMA rw' 'DeviceAllow=char-ttyUSB rw' 'DeviceAllow=char-input r' RuntimeDirectory=kiosk \
           CacheDirectory=kiosk 'DeviceAllow=char-alsa rw' \
           NoNewPrivileges=yes ProtectSystem=strict ProtectHome=yes PrivateTmp=yes \
           ProtectKernelTunables=yes ProtectKernelModules=yes ProtectControlGroups=yes \
           'RestrictAddressFamilies=AF_UNIX AF_NETLINK' LockPersonality=yes MemoryDenyWriteExecute=yes \
           SystemCallFilter=@system-service 'CapabilityBoundingSet=' StateDirectory=kiosk RequiresMountsFor=/var/lib/kiosk; do
    grep -q "^$s" "$u" || missing="$missing $s"
  done
  # StartLimit* belong in [Unit]: in [Service] systemd ignores them.
  awk '/^\[/{sec=$0} /^StartLimit/{ if (sec != "[Unit]") bad=1 } END{exit bad}' "$u" || missing="$missing StartLimit*-in-[Unit]"
  [ -z "$missing" ] || { echo "missing:$missing"; return 1; }
}

# --- install.sh into DESTDIR
dest=$work/dest
inst() { DESTDIR=$dest "$repo/deploy/install.sh" "$@"; }
snapshot() { (cd "$dest" && find . -printf '%p %y %m %s %T@\n' | LC_ALL=C sort; find . -type f -print0 | LC_ALL=C sort -z | xargs -0 -r md5sum); }
staged_files="/usr/local/bin/kiosk /etc/systemd/system/kiosk.service /etc/systemd/system/kiosk-setup.path /etc/systemd/system/kiosk-setup.service /usr/local/share/doc/kiosk/README.md /usr/local/share/doc/kiosk/docs/reference.md /usr/local/share/man/man8/kiosk.8.gz /usr/local/share/man/man5/kiosk.conf.5.gz /etc/default/kiosk"

check install-destdir "first run exits 0 and stages $staged_files" \
  bash -c 'out=$(DESTDIR="$1" "$2/deploy/install.sh" --binary "$3" 2>&1) || { echo "$out"; exit 1; }
           for f in $4; do [ -f "$1$f" ] || { echo "missing $f"; exit 1; }; done
           [ "$(stat -c %a "$1/usr/local/bin/kiosk")" = 755 ] || { echo "binary mode"; exit 1; }
           "$1/usr/local/bin/kiosk" --version >/dev/null || { echo "staged binary does not run"; exit 1; }
           cmp -s "$2/deploy/kiosk.env" "$1/etc/default/kiosk" || { echo "/etc/default/kiosk is not kiosk.env"; exit 1; }' \
  _ "$dest" "$repo" "$binary" "$staged_files"

check unit-settings "Type=notify, watchdog, restart policy, device allow-list, sandbox" \
  unit_has_settings "$dest/etc/systemd/system/kiosk.service"
check unit-exec-start "the staged unit runs /usr/local/bin/kiosk run" \
  grep -qx 'ExecStart=/usr/local/bin/kiosk run' "$dest/etc/systemd/system/kiosk.service"
check unit-verify "systemd-analyze verify of the staged unit: no message" verify_unit "$dest"
check setup-units-verify "systemd-analyze verify of kiosk-setup.path and .service (root, kiosk setup --apply): no message" \
  verify_unit "$dest" kiosk-setup.path kiosk-setup.service
check setup-units-exec "kiosk-setup.service applies /run/kiosk/setup/code with the staged binary when the path unit sees it" \
  bash -c 'grep -qx "ExecStart=/usr/local/bin/kiosk setup --apply /run/kiosk/setup/code" "$1" \
           && grep -qx "PathExists=/run/kiosk/setup/code" "$2"' _ "$dest/etc/systemd/system/kiosk-setup.service" "$dest/etc/systemd/system/kiosk-setup.path"
# The check above only means something if verify does speak up on a broken unit.
broken=$work/broken
check unit-verify-catches "systemd-analyze verify reports an unknown key and a missing binary" \
  bash -c 'cp -a "$1/." "$2/" && sed -i "s/^LockPersonality=yes/LockPersonality=yes\nNoSuchKey=1/" "$2/etc/systemd/system/kiosk.service" \
           && rm "$2/usr/local/bin/kiosk" && mkdir -p "$2/lib/systemd/system" && cp -an /lib/systemd/system/. "$2/lib/systemd/system/" \
           && out=$(systemd-analyze verify --root="$2" kiosk.service 2>&1); grep -q NoSuchKey <<<"$out" && grep -q "not executable" <<<"$out"' \
  _ "$dest" "$broken"
check unit-security "systemd-analyze security --offline: exposure at most 2.5" \
  bash -c 'v=$(mktemp -d "$2/sec.XXXXXX"); cp -a "$1/." "$v/"; mkdir -p "$v/lib/systemd/system"; cp -an /lib/systemd/system/. "$v/lib/systemd/system/"
           out=$(systemd-analyze security --offline=yes --root="$v" --threshold=25 kiosk.service 2>&1) || { grep -i "exposure" <<<"$out"; exit 1; }' \
  _ "$dest" "$work"

# kiosk.env: every variable of the contract, commented out, and every default accepted.
env_vars() { grep -o '^#KIOSK_[A-Z0-9_]*=' "$1" | tr -d '#=' | LC_ALL=C sort; }
check env-file-reference "kiosk.env lists every variable of docs/reference.md's table, all commented out" \
  bash -c 'diff <(grep -o "^#KIOSK_[A-Z0-9_]*=" "$1/deploy/kiosk.env" | tr -d "#=" | LC_ALL=C sort) \
                <(grep -o "^| \`KIOSK_[A-Z0-9_]*\`" "$1/docs/reference.md" | grep -o "KIOSK_[A-Z0-9_]*" | LC_ALL=C sort -u) \
           && ! grep -q "^KIOSK_" "$1/deploy/kiosk.env"' _ "$repo"
# ../shared beside the checkout, or KIOSK_SHARED (as the trixie and arm64 tiers take it).
interface=${KIOSK_SHARED:-$repo/../shared}/docs/interface.md
known_vars() { env -i PATH=/usr/bin:/bin "$binary" check | grep -o '^KIOSK_[A-Z_0-9]*' | LC_ALL=C sort -u; }
# Every variable `kiosk check` prints is in kiosk.env (and so, by the check above, in the reference).
check env-file-known "kiosk.env lists exactly the variables kiosk check knows" \
  diff <(env_vars "$repo/deploy/kiosk.env") <(known_vars)
# The contract also lists variables of features still to be built (MQTT, ...): those the binary
# does not know yet are named in a SKIP line, and so are variables the binary has beyond the
# contract. A row may name several (`KIOSK_BEEP_READ`, `KIOSK_BEEP_GRANTED`, ...) and
# "`KIOSK_DOOR_LINE` (+ `_ACTIVE_LOW`)" stands for KIOSK_DOOR_ACTIVE_LOW too; a meaning that
# names one with its default ("lit for `KIOSK_LED_MS` (`2000`)") defines it there.
contract_vars() {
  grep '^| `KIOSK_' "$1" | awk -F'|' '{
    n = split($2, w, /[^A-Z0-9_]+/)
    for (i = 1; i <= n; i++) if (w[i] ~ /^KIOSK_/) { print w[i]; if (index($2, "_ACTIVE_LOW`)") && w[i] ~ /_LINE$/) { v = w[i]; sub(/_LINE$/, "_ACTIVE_LOW", v); print v } }
    rest = $4
    while (match(rest, /`KIOSK_[A-Z0-9_]+` \(`/)) { print substr(rest, RSTART + 1, RLENGTH - 5); rest = substr(rest, RSTART + RLENGTH) }
  }' | LC_ALL=C sort -u
}
if [ -f "$interface" ]; then
  check env-file-interface "kiosk.env lists every variable of shared/docs/interface.md that kiosk check knows" \
    bash -c '[ -z "$(LC_ALL=C comm -23 <(LC_ALL=C comm -12 <(echo "$1") <(echo "$2")) <(echo "$3"))" ]' _ \
    "$(contract_vars "$interface")" "$(known_vars)" "$(env_vars "$repo/deploy/kiosk.env")"
  unbuilt=$(LC_ALL=C comm -23 <(contract_vars "$interface") <(known_vars) | tr '\n' ' ')
  [ -z "$unbuilt" ] || skip env-file-interface-unbuilt "in interface.md, not in this kiosk yet: $unbuilt"
  extra=$(LC_ALL=C comm -13 <(contract_vars "$interface") <(known_vars) | tr '\n' ' ')
  [ -z "$extra" ] || skip env-file-interface-extra "in this kiosk, not in interface.md (yet): $extra"
else
  skip env-file-interface "no $interface here"
fi
check env-file-defaults "kiosk.env with every line uncommented passes \`kiosk check\`" \
  bash -c 'sed -n "s/^#\(KIOSK_[A-Z_]*=\)/\1/p" "$1/deploy/kiosk.env" > "$3/all.env"
           env -i PATH=/usr/bin:/bin sh -c "set -a; . \"$3/all.env\"; exec \"$2\" check"' _ "$repo" "$binary" "$work"

# Second run: the edited /etc/default/kiosk survives, nothing else changes (not even an mtime).
echo 'KIOSK_ROTATE=180  # edited by the test' >> "$dest/etc/default/kiosk"
before=$(snapshot)
check install-idempotent "second run exits 0 and changes no file, mode or mtime" \
  bash -c 'out=$(DESTDIR="$1" "$2/deploy/install.sh" --binary "$3" 2>&1) || { echo "$out"; exit 1; }; grep -q "  installed" <<<"$out" && { echo "$out"; exit 1; }; exit 0' \
  _ "$dest" "$repo" "$binary"
after=$(snapshot)
check install-idempotent-tree "the staged tree is byte for byte the same after the second run" \
  diff <(echo "$before") <(echo "$after")
check install-keeps-env "the edited /etc/default/kiosk survives the second run" \
  grep -q '^KIOSK_ROTATE=180  # edited by the test$' "$dest/etc/default/kiosk"

# The network for the broker (issue 17): a drop-in only when /etc/default/kiosk sets KIOSK_MQTT_URL.
# Its effect is read off systemd's own offline analysis of the unit with its drop-ins.
dropin=/etc/systemd/system/kiosk.service.d/mqtt.conf
inet_allowed() {  # ROOT: "yes" when systemd says kiosk.service may open AF_INET/AF_INET6 sockets
  local v; v=$(mktemp -d "$work/inet.XXXXXX"); cp -a "$1/." "$v/"; mkdir -p "$v/lib/systemd/system"; cp -an /lib/systemd/system/. "$v/lib/systemd/system/"
  systemd-analyze security --offline=yes --root="$v" kiosk.service 2>&1 | grep 'RestrictAddressFamilies=~AF_(INET|INET6)' | grep -q '✗' && echo yes || echo no
}
check mqtt-dropin-absent "no KIOSK_MQTT_URL: no drop-in, the unit allows AF_UNIX and AF_NETLINK only" \
  bash -c '[ ! -e "$1$2" ] && [ "$3" = no ] && [ -f "$1/usr/local/share/kiosk/mqtt.conf" ]' _ "$dest" "$dropin" "$(inet_allowed "$dest")"
echo 'KIOSK_MQTT_URL=mqtt://broker.local  # added by the test' >> "$dest/etc/default/kiosk"
check mqtt-dropin-written "KIOSK_MQTT_URL set: install.sh writes $dropin (the shipped mqtt.conf)" \
  bash -c 'out=$(DESTDIR="$1" "$2/deploy/install.sh" --binary "$3" 2>&1) || { echo "$out"; exit 1; }
           cmp "$2/deploy/mqtt.conf" "$1$4" || exit 1' _ "$dest" "$repo" "$binary" "$dropin"
check mqtt-dropin-verify "systemd-analyze verify of the unit with the drop-in: no message" verify_unit "$dest"
check mqtt-dropin-inet "with the drop-in, systemd lets the service open AF_INET and AF_INET6 sockets" \
  bash -c '[ "$1" = yes ]' _ "$(inet_allowed "$dest")"
check mqtt-dropin-families "the drop-in keeps AF_UNIX and AF_NETLINK and adds AF_INET AF_INET6 only" \
  bash -c '[ "$(grep "^RestrictAddressFamilies=" "$1" | tr "\n" "|")" = "RestrictAddressFamilies=|RestrictAddressFamilies=AF_UNIX AF_NETLINK AF_INET AF_INET6|" ]' _ "$repo/deploy/mqtt.conf"
sed -i '/added by the test/d' "$dest/etc/default/kiosk"
check mqtt-dropin-removed "KIOSK_MQTT_URL gone: install.sh removes the drop-in again" \
  bash -c 'DESTDIR="$1" "$2/deploy/install.sh" --binary "$3" >/dev/null 2>&1 && [ ! -e "$1$4" ] && [ ! -d "$1${4%/*}" ]' _ "$dest" "$repo" "$binary" "$dropin"

check uninstall "--uninstall removes binary, unit, doc and manual pages, keeps the edited /etc/default/kiosk" \
  bash -c 'out=$(DESTDIR="$1" "$2/deploy/install.sh" --uninstall 2>&1) || { echo "$out"; exit 1; }
           for f in /usr/local/bin/kiosk /etc/systemd/system/kiosk.service /usr/local/share/doc/kiosk \
                    /usr/local/share/man/man8/kiosk.8.gz /usr/local/share/man/man5/kiosk.conf.5.gz; do
             [ ! -e "$1$f" ] || { echo "still there: $f"; exit 1; }; done
           grep -q "edited by the test" "$1/etc/default/kiosk" || { echo "/etc/default/kiosk lost"; exit 1; }' \
  _ "$dest" "$repo"
check uninstall-purge "--uninstall --purge removes /etc/default/kiosk too" \
  bash -c 'DESTDIR="$1" "$2/deploy/install.sh" --uninstall --purge >/dev/null && [ ! -e "$1/etc/default/kiosk" ]' _ "$dest" "$repo"

# --- The .deb
debdir=$work/deb
deb=$debdir/kiosk_${version}_${arch}.deb
if out=$(SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-1700000000} "$repo/deploy/build-deb.sh" --binary "$binary" --out "$debdir" 2>&1) && [ -f "$deb" ]; then
  pass deb-build "$(basename "$deb")"
else
  fail deb-build "no $deb"; sed 's/^/    /' <<<"$out"; finish
fi

# The kiosk uses none of String's regex-backed algorithms: linking one (String.contains(String),
# split(separator: String), ...) brings in _StringProcessing and _RegexParser, 0.8 MB of code.
check binary-no-regex-engine "the binary holds no _StringProcessing or _RegexParser (0.8 MB of code)" \
  bash -c 'syms=$(nm "$1") && [ "$(wc -l <<<"$syms")" -gt 1000 ] || { echo "nm found no symbols in $1"; exit 1; }
           ! grep -E "17_StringProcessing|12_RegexParser" <<<"$syms" | head -5 | grep .' _ "$binary"
# The kiosk exports none of its own names (--no-export-dynamic, Package.swift): the static standard
# library's link arguments ask for --export-dynamic, 8,463 names and 0.6-1.0 MB of idle RSS.
check binary-no-exports "the binary's dynamic symbol table defines none of the kiosk's Swift names" \
  bash -c 'syms=$(nm -D --defined-only "$1") || exit 1; n=$(grep -c " \$s" <<<"$syms" || true)
           [ "$n" = 0 ] || { echo "$n Swift names exported, e.g.:"; grep " \$s" <<<"$syms" | head -3; exit 1; }' _ "$binary"
# The functions an idle kiosk and a decode run are linked first in its text (issue 23): their code in
# few of its 64 kB windows, and the list not stale (harness/memory/hot-windows.py).
check binary-hot-functions "the idle kiosk's functions first in the text (Sources/KioskMain/hot-functions.order)" \
  "$repo/harness/memory/hot-windows.py" "$binary" "$repo/Sources/KioskMain/hot-functions.order"
check deb-control "Package, Version ($version), Architecture ($arch), Maintainer, Description" \
  bash -c '[ "$(dpkg-deb --field "$1" Package)" = kiosk ] && [ "$(dpkg-deb --field "$1" Version)" = "$2" ] \
           && [ "$(dpkg-deb --field "$1" Architecture)" = "$3" ] && [ -n "$(dpkg-deb --field "$1" Maintainer)" ] \
           && [ -n "$(dpkg-deb --field "$1" Description)" ] || { dpkg-deb --field "$1"; exit 1; }' _ "$deb" "$version" "$arch"
check deb-depends "Depends: the runtime libraries and adduser, nothing from /opt/swift" \
  bash -c 'd=$(dpkg-deb --field "$1" Depends); for p in adduser libc6 libzbar0 libv4l-0 libgpiod2 libpng16-16 libqrencode4 libzxing2 libmosquitto1; do
             grep -Eq "(^|, )$p( |,|$)" <<<"$d" || { echo "no $p in: $d"; exit 1; }; done
           ! grep -qi swift <<<"$d" || { echo "$d"; exit 1; }' _ "$deb"
check deb-contents "binary, unit, the settings' defaults (/usr/share/kiosk/kiosk.env, nothing in /etc) and docs where Debian wants them, owned by root" \
  bash -c 'c=$(dpkg-deb --contents "$1")
           for e in "-rwxr-xr-x root/root .* ./usr/bin/kiosk$" "-rw-r--r-- root/root .* ./lib/systemd/system/kiosk.service$" \
                    "-rw-r--r-- root/root .* ./lib/systemd/system/kiosk-setup.path$" "-rw-r--r-- root/root .* ./lib/systemd/system/kiosk-setup.service$" \
                    "-rw-r--r-- root/root .* ./usr/share/kiosk/kiosk.env$" "-rw-r--r-- root/root .* ./usr/share/doc/kiosk/copyright$" \
                    "-rw-r--r-- root/root .* ./usr/share/doc/kiosk/changelog.gz$" "-rw-r--r-- root/root .* ./usr/share/doc/kiosk/README.md.gz$" \
                    "-rw-r--r-- root/root .* ./usr/share/kiosk/mqtt.conf$" \
                    "-rw-r--r-- root/root .* ./usr/share/man/man8/kiosk.8.gz$" "-rw-r--r-- root/root .* ./usr/share/man/man5/kiosk.conf.5.gz$" \
                    "-rw-r--r-- root/root .* ./usr/share/doc/kiosk/docs/reference.md.gz$"; do
             grep -Eq -- "^$e" <<<"$c" || { echo "no line like: $e"; echo "$c"; exit 1; }; done
           ! grep -q "/usr/local\|/opt/\| \./etc/" <<<"$c" || { echo "$c"; exit 1; }' _ "$deb"
check deb-libcamera-plugin "the libcamera plugin's source ships in /usr/share/kiosk/libcamera-plugin and builds there, alone, into a plugin the kiosk's loader accepts" \
  bash -c 'd=$(mktemp -d "$2/plugin.XXXXXX"); dpkg-deb -x "$1" "$d"; p=$d/usr/share/kiosk/libcamera-plugin
           for f in Makefile kiosk_libcamera.cpp kiosk_libcamera.h kiosk_dlopen.h loader.c lc-probe.c; do [ -f "$p/$f" ] || { echo "no $f"; exit 1; }; done
           make -s -C "$p" kiosk-libcamera.so lc-probe >"$d/make.log" 2>&1 || { cat "$d/make.log"; exit 1; }
           nm -D --defined-only "$p/kiosk-libcamera.so" | grep -q " T kiosk_lcp_open$" || { echo "no kiosk_lcp_open exported"; exit 1; }
           ! nm -D --defined-only "$p/kiosk-libcamera.so" | grep " T " | grep -qv " kiosk_lcp_" || { echo "exports more than kiosk_lcp_*"; exit 1; }
           out=$("$p/lc-probe" "$p/kiosk-libcamera.so" list 2>&1); grep -q "^version " <<<"$out" || { echo "$out"; exit 1; }' _ "$deb" "$work"
# No conffile: kiosk setup rewrites /etc/default/kiosk, and dpkg would ask about it at the next
# upgrade that changed the defaults (dpkg-upgrade.sh below shows both).
check deb-conffiles "no conffiles: postinst makes /etc/default/kiosk when there is none, postrm removes it on purge" \
  bash -c '! dpkg-deb --info "$1" conffiles >/dev/null 2>&1 || { echo "conffiles: $(dpkg-deb --info "$1" conffiles)"; exit 1; }
           d=$(mktemp -d "$2/ctrl.XXXXXX"); dpkg-deb --control "$1" "$d"
           grep -q "cp /usr/share/kiosk/kiosk.env /etc/default/kiosk.dpkg-new" "$d/postinst" \
             && grep -q "\[ ! -e /etc/default/kiosk \]" "$d/postinst" && grep -q "rm -f /etc/default/kiosk " "$d/postrm"' _ "$deb" "$work"
check deb-scripts "postinst/prerm/postrm: executable, sh -n clean, user and groups, deb-systemd-helper, guarded systemctl" \
  bash -c 'd=$(mktemp -d "$2/ctrl.XXXXXX"); dpkg-deb --control "$1" "$d"
           for s in postinst prerm postrm; do [ -x "$d/$s" ] && sh -n "$d/$s" || { echo "$s"; exit 1; }; done
           grep -q "adduser --quiet --system --group" "$d/postinst" && grep -q "addgroup --quiet --system" "$d/postinst" \
             && grep -q "deb-systemd-helper enable" "$d/postinst" && grep -q "deb-systemd-helper purge" "$d/postrm" \
             && ! grep -v "^\s*#" "$d/postinst" "$d/prerm" "$d/postrm" | grep "systemctl" | grep -v "daemon-reload" \
             && grep -B3 "systemctl --system daemon-reload" "$d/postinst" | grep -q "/run/systemd/system"' _ "$deb" "$work"

# dpkg itself: install, a door's setup edit, upgrades (from this package and from a conffile-era
# one) with no one to answer, purge; in a throwaway overlay of this machine (root only).
while IFS= read -r line; do
  case $line in
    PASS*) echo "$line"; passed=$((passed + 1)) ;;
    FAIL*) echo "$line"; failed=$((failed + 1)) ;;
    SKIP*) name=${line#SKIP }; skip "${name%%:*}" "${name#*: }" ;;
    *) echo "    $line" ;;
  esac
done < <("$repo/harness/deploy/dpkg-upgrade.sh" "$deb" "$work" 2>&1)

extract=$work/extract
dpkg-deb --extract "$deb" "$extract"
check deb-mqtt-inactive "the package's unit gives no network; its drop-in is shipped inactive (/usr/share/kiosk/mqtt.conf, no kiosk.service.d)" \
  bash -c '! dpkg-deb --contents "$1" | grep -q "kiosk.service.d" && [ "$2" = no ]' _ "$deb" "$(inet_allowed "$extract")"
if grep -qx "ExecStart=/usr/bin/kiosk run" "$extract/lib/systemd/system/kiosk.service" && out=$(verify_unit "$extract" 2>&1); then
  pass deb-unit-verify "systemd-analyze verify of the packaged unit: no message"
else
  fail deb-unit-verify "packaged unit"; sed 's/^/    /' <<<"$out"
fi
# The manual pages as an installed system reads them: `man kiosk` and `man kiosk.conf` find the
# package's pages (MANPATH pointed into the extracted package), and they render at 80 columns
# without a warning (issue 36: lintian's no-manual-page is gone, not overridden).
check deb-man "man kiosk and man kiosk.conf find the package's pages, which render without a warning" \
  bash -c 'command -v man >/dev/null || { echo "no man (man-db)"; exit 1; }
           root=$1
           for page in 8:kiosk 5:kiosk.conf; do sec=${page%%:*} name=${page#*:}; f=$root/usr/share/man/man$sec/$name.$sec.gz
             [ "$(MANPATH=$root/usr/share/man man -w "$sec" "$name")" = "$f" ] || { echo "man -w $sec $name: not $f"; exit 1; }
             err=$(MANWIDTH=80 man --warnings -l "$f" 2>&1 >/dev/null); [ -z "$err" ] || { echo "$err"; exit 1; }
           done
           ! grep -q no-manual-page "$root/usr/share/lintian/overrides/kiosk" || { echo "the override is still there"; exit 1; }' _ "$extract"
check deb-binary "packaged binary: stripped, no Swift runtime from /opt/swift, prints version $version" \
  bash -c 'b="$1/usr/bin/kiosk"; ! LC_ALL=C ldd "$b" | grep -Eq "/opt/swift|libswift|not found" || { ldd "$b"; exit 1; }
           file "$b" | grep -q ", stripped" || { file "$b"; exit 1; }
           [ "$("$b" --version | head -1)" = "kiosk $2" ]' _ "$extract" "$version"
check deb-copyright "copyright is machine-readable (Format: 1.0), Apache-2.0, and names the package of every library the binary links" \
  bash -c 'c="$1/usr/share/doc/kiosk/copyright"; head -1 "$c" | grep -qx "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/" \
           && grep -A2 "^Files: \*" "$c" | grep -qx "License: Apache-2.0" && grep -qx "License: Apache-2.0" "$c" || { cat "$c"; exit 1; }
           for so in $(readelf -d "$1/usr/bin/kiosk" | sed -n "s/.*Shared library: \[\(.*\)\]/\1/p"); do
             path=$(ldconfig -p | awk -v so="$so" "\$1 == so && /x86-64|aarch64/ && !f { print \$NF; f = 1 }")
             pkg=$( { dpkg -S "$path" || dpkg -S "$(readlink -f "$path")"; } 2>/dev/null | head -1 | cut -d: -f1); pkg=${pkg%t64}
             [ -n "$pkg" ] && grep -q "\b$pkg\b" "$c" || { echo "$so ($path, package ${pkg:-unknown}) is not named in the copyright"; exit 1; }
           done' _ "$extract"

lintian_out=$work/lintian.txt
lintian --pedantic -I "$deb" > "$lintian_out" 2>&1
lintian_rc=$?
errors=$(grep -c '^E:' "$lintian_out") warnings=$(grep -c '^W:' "$lintian_out") infos=$(grep -c '^[IP]:' "$lintian_out")
if [ "$lintian_rc" = 0 ] && [ "$errors" = 0 ] && [ "$warnings" = 0 ]; then
  pass lintian "0 errors, 0 warnings, $infos info/pedantic (overrides, with reasons, in /usr/share/lintian/overrides/kiosk)"
else
  fail lintian "exit $lintian_rc, $errors errors, $warnings warnings"; sed 's/^/    /' "$lintian_out"
fi

# --- Optional: the real thing on this machine.
if [ "$system" = 1 ]; then
  if [ "$(id -u)" != 0 ]; then
    fail system-install "--system needs root (asked for, so not a skip)"
  else
    check system-install-sh "install.sh as root installs, creates kiosk in video and gpio; --uninstall --purge removes" \
      bash -c '"$1/deploy/install.sh" --binary "$2" --no-start >/dev/null || exit 1
               [ -x /usr/local/bin/kiosk ] && [ -f /etc/systemd/system/kiosk.service ] && [ -f /etc/default/kiosk ] || { echo files; exit 1; }
               g=$(id -nG kiosk) && grep -qw video <<<"$g" && grep -qw gpio <<<"$g" || { echo "groups: $g"; exit 1; }
               "$1/deploy/install.sh" --binary "$2" --no-start | grep -q "  installed" && { echo "second run changed files"; exit 1; }
               "$1/deploy/install.sh" --uninstall --purge >/dev/null && [ ! -e /usr/local/bin/kiosk ] && [ ! -e /etc/default/kiosk ]' \
      _ "$repo" "$binary"
    check system-dpkg "dpkg -i installs (user, groups, enabled unit), dpkg --purge removes all but the user" \
      bash -c 'dpkg -i "$1" >/dev/null || exit 1
               [ -x /usr/bin/kiosk ] && [ -f /etc/default/kiosk ] || { echo files; exit 1; }
               g=$(id -nG kiosk) && grep -qw video <<<"$g" && grep -qw gpio <<<"$g" || { echo "groups: $g"; exit 1; }
               [ -L /etc/systemd/system/multi-user.target.wants/kiosk.service ] || { echo "not enabled"; exit 1; }
               dpkg --purge kiosk >/dev/null || exit 1
               [ ! -e /usr/bin/kiosk ] && [ ! -e /etc/default/kiosk ] && [ ! -e /etc/systemd/system/multi-user.target.wants/kiosk.service ] \
                 || { echo "left behind"; exit 1; }' _ "$deb"
  fi
else
  skip system-install "not asked (--system installs on this machine)"
fi

finish
