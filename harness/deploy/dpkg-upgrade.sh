#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# /etc/default/kiosk through dpkg's own life cycle, with no one to answer a question: the package
# ships no conffile (kiosk setup rewrites the file), so an upgrade must never stop at dpkg's
# conffile prompt. Run by harness/deploy/run.sh (make test-deploy) as root.
#
#   harness/deploy/dpkg-upgrade.sh DEB WORK
#
# Everything happens in a copy of this machine that vanishes: a private mount namespace, an
# overlay whose lower layer is / and whose upper layer is a tmpfs, chrooted into (the machine's own
# dpkg database, libraries and adduser; no /run/systemd/system there, so the maintainer scripts
# leave systemd alone). Three packages are made from DEB with dpkg-deb: `old` (version 0.0.1, as
# packages were before: /etc/default/kiosk shipped as a conffile), DEB itself, and `newer` (DEB's
# version +newer1, its defaults changed). Each dpkg runs with DEBIAN_FRONTEND=noninteractive,
# stdin closed and no --force-conf* option, so a conffile question fails the run (dpkg reads EOF).
# The edit is the one a door makes: `kiosk setup --apply CODE --root ROOT` with the package's own
# binary, the code made by deploy/examples/site-setup with Debian's python3-cbor2 and
# python3-cryptography, the site key by openssl.
# Checks, one PASS/FAIL line each (the caller counts them):
#   fresh: install DEB (the file made from the defaults, 0644, no conffile), setup's edit, upgrade
#     to newer (no question, the edit kept, the new defaults in /usr/share/kiosk), purge (gone)
#   from a conffile: install old, setup's edit, upgrade to DEB and to newer (no question, the edit
#     kept, dpkg no longer lists it as a live conffile), purge (gone)
#   the control: old, edited, upgraded to an old-style package whose conffile changed: dpkg asks
#     and, no one answering, fails (what the change prevents; proves a question would be seen)
set -uo pipefail

deb=${1:?usage: dpkg-upgrade.sh DEB WORK}
work=${2:?usage: dpkg-upgrade.sh DEB WORK}
repo=$(cd "$(dirname "$0")/../.." && pwd)
ok() { echo "PASS $1${2:+: $2}"; }
no() { echo "FAIL $1${2:+: $2}"; }

if [ "$(id -u)" != 0 ]; then echo "SKIP deb-dpkg-upgrade: needs root (a mount namespace, an overlay, dpkg)"; exit 0; fi
for tool in unshare chroot openssl /usr/bin/python3; do
  command -v "$tool" >/dev/null || { no deb-dpkg-upgrade "$tool missing"; exit 0; }
done
/usr/bin/python3 -c 'import cbor2, cryptography' 2>/dev/null || { no deb-dpkg-upgrade "python3-cbor2 and python3-cryptography missing (make test-deploy installs them)"; exit 0; }

# --- The packages.
pkgs=$work/dpkg-pkgs
mkdir -p "$pkgs"
version=$(dpkg-deb --field "$deb" Version)
variant() {  # NAME VERSION CONFFILE(0/1) DEFAULTS_LINE: a package made from DEB
  local name=$1 v=$2 conffile=$3 line=$4 d=$pkgs/$1
  rm -rf "$d" && dpkg-deb -R "$deb" "$d" || return 1
  sed -i "s/^Version: .*/Version: $v/" "$d/DEBIAN/control"
  [ -z "$line" ] || echo "$line" >> "$d/usr/share/kiosk/kiosk.env"
  if [ "$conffile" = 1 ]; then
    install -D -m 0644 "$d/usr/share/kiosk/kiosk.env" "$d/etc/default/kiosk"
    echo /etc/default/kiosk > "$d/DEBIAN/conffiles"
  fi
  (cd "$d" && find . -path ./DEBIAN -prune -o -path ./etc -prune -o -type f -printf '%P\0' | LC_ALL=C sort -z | xargs -0 md5sum) > "$d/DEBIAN/md5sums"
  dpkg-deb --root-owner-group -Zgzip -z1 --build "$d" "$pkgs/$name.deb" >/dev/null && rm -rf "$d"
}
variant old 0.0.1 1 "" && variant old2 0.0.2 1 "#KIOSK_NEW_IN_0_0_2=1  (a default changed)" \
  && variant newer "$version+newer1" 0 "#KIOSK_NEW_IN_NEWER=1  (a default changed)" \
  && cp "$deb" "$pkgs/new.deb" || { no deb-dpkg-upgrade "could not make the packages from $deb"; exit 0; }

# --- The code a door would be shown (no door named: any host), and the site's key.
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$pkgs/site.key" 2>/dev/null \
  && /usr/bin/python3 "$repo/deploy/examples/site-setup" make --key "$pkgs/site.key" --out "$pkgs/code" \
       --env KIOSK_ROI=0.2,0.2,0.6,0.6 --env KIOSK_DOOR_MS=2500 --tz Europe/Berlin >/dev/null 2>"$pkgs/site-setup.err" \
  || { no deb-dpkg-upgrade "site-setup could not make a code: $(cat "$pkgs/site-setup.err")"; exit 0; }

# --- The scenarios, each in a fresh overlay of this machine (its own namespace).
cat > "$pkgs/scenario.sh" <<'ZZSCENARIO'
set -uo pipefail
pkgs=$1 scenario=$2
m=$pkgs/ovl/$scenario
mkdir -p "$m" && mount -t tmpfs tmpfs "$m" && mkdir "$m/upper" "$m/work" "$m/root" \
  && mount -t overlay overlay -o "lowerdir=/,upperdir=$m/upper,workdir=$m/work" "$m/root" \
  && mount -t proc proc "$m/root/proc" && mount --bind /dev "$m/root/dev" \
  && mkdir -p "$m/root/run" && mount -t tmpfs tmpfs "$m/root/run" \
  || { echo "FAIL deb-dpkg-upgrade $scenario: no overlay of / here"; exit 0; }
r=$m/root
mkdir -p "$r/tmp/pkgs" && cp "$pkgs"/*.deb "$r/tmp/pkgs/"
# A machine without the package (this one may have had it).
chroot "$r" dpkg --purge kiosk >/dev/null 2>&1
rm -f "$r/etc/default/kiosk"
say() { echo "$@"; }
dpkg_quiet() {  # ARGS: dpkg in the root, no one at the keyboard; its output in $out
  out=$(chroot "$r" env DEBIAN_FRONTEND=noninteractive dpkg "$@" </dev/null 2>&1); local rc=$?
  if grep -q "Configuration file" <<<"$out"; then asked=1; else asked=0; fi
  return $rc
}
conffiles() { chroot "$r" dpkg-query -W -f='${Conffiles}' kiosk 2>/dev/null | sed 's/^ //'; }
setup_edit() {  # the door's edit: the package's kiosk applies the code to the root's files
  cp "$pkgs/code.ks1" "$r/tmp/code.ks1"
  "$r/usr/bin/kiosk" setup --apply "$r/tmp/code.ks1" --root "$r" >"$m/setup.out" 2>&1 \
    && grep -qx "KIOSK_ROI=0.2,0.2,0.6,0.6" "$r/etc/default/kiosk" && grep -qx "KIOSK_DOOR_MS=2500" "$r/etc/default/kiosk" \
    || { cat "$m/setup.out"; return 1; }
  cp "$r/etc/default/kiosk" "$m/edited"
}
case $scenario in
fresh)
  if dpkg_quiet -i /tmp/pkgs/new.deb && cmp -s "$r/etc/default/kiosk" "$r/usr/share/kiosk/kiosk.env" \
     && [ "$(stat -c %a "$r/etc/default/kiosk")" = 644 ] && [ -z "$(conffiles)" ]; then
    say "PASS deb-dpkg-install: dpkg -i makes /etc/default/kiosk from /usr/share/kiosk/kiosk.env (0644), no conffile"
  else
    say "FAIL deb-dpkg-install: $(tail -3 <<<"$out") conffiles: $(conffiles)"
  fi
  if setup_edit; then say "PASS deb-dpkg-setup-edit: kiosk setup --apply rewrote /etc/default/kiosk (as a door does)"
  else say "FAIL deb-dpkg-setup-edit"; fi
  if dpkg_quiet -i /tmp/pkgs/newer.deb && [ "$asked" = 0 ] && cmp -s "$r/etc/default/kiosk" "$m/edited" \
     && grep -q KIOSK_NEW_IN_NEWER "$r/usr/share/kiosk/kiosk.env"; then
    say "PASS deb-dpkg-upgrade-fresh: upgraded to changed defaults, stdin closed: no question, the door's edit kept, the new defaults in /usr/share/kiosk/kiosk.env"
  else
    say "FAIL deb-dpkg-upgrade-fresh: asked=$asked; $(tail -5 <<<"$out")"; diff "$m/edited" "$r/etc/default/kiosk" | head -5
  fi
  ;;
conffile)
  if dpkg_quiet -i /tmp/pkgs/old.deb && [ "$(conffiles | cut -d' ' -f1)" = /etc/default/kiosk ] && setup_edit; then
    say "PASS deb-dpkg-old: the conffile-era package installed, its /etc/default/kiosk edited by kiosk setup"
  else
    say "FAIL deb-dpkg-old: $(tail -3 <<<"$out")"; exit 0
  fi
  if dpkg_quiet -i /tmp/pkgs/new.deb && [ "$asked" = 0 ] && cmp -s "$r/etc/default/kiosk" "$m/edited" \
     && ! conffiles | grep -v " obsolete$" | grep -q /etc/default/kiosk \
     && dpkg_quiet -i /tmp/pkgs/newer.deb && [ "$asked" = 0 ] && cmp -s "$r/etc/default/kiosk" "$m/edited"; then
    say "PASS deb-dpkg-upgrade-from-conffile: 0.0.1 (a conffile, edited) to this package and to newer defaults: no question, the edit kept; dpkg lists it $( [ -n "$(conffiles)" ] && echo "as obsolete" || echo "no more")"
  else
    say "FAIL deb-dpkg-upgrade-from-conffile: asked=$asked; conffiles: $(conffiles); $(tail -5 <<<"$out")"
  fi
  ;;
control)
  if dpkg_quiet -i /tmp/pkgs/old.deb && setup_edit; then
    if dpkg_quiet -i /tmp/pkgs/old2.deb; then rc=0; else rc=$?; fi
    if [ "$rc" != 0 ] && [ "$asked" = 1 ]; then
      say "PASS deb-dpkg-control: a conffile edited by setup, its default changed: dpkg asks and, no one answering, fails (exit $rc): what the package no longer ships"
    else
      say "FAIL deb-dpkg-control: the old way did not ask (exit $rc, asked=$asked): the checks above could not see a question; $(tail -3 <<<"$out")"
    fi
  else
    say "FAIL deb-dpkg-control: $(tail -3 <<<"$out")"
  fi
  chroot "$r" dpkg --configure -a --force-confold </dev/null >/dev/null 2>&1
  ;;
esac
if [ "$scenario" != control ]; then
  if dpkg_quiet --purge kiosk && [ ! -e "$r/etc/default/kiosk" ] && [ ! -e "$r/usr/share/kiosk" ] \
     && ! chroot "$r" dpkg-query -W kiosk >/dev/null 2>&1 && [ -z "$(ls "$r"/etc/default/kiosk.* 2>/dev/null)" ]; then
    say "PASS deb-dpkg-purge-$scenario: dpkg --purge removes /etc/default/kiosk and the defaults"
  else
    say "FAIL deb-dpkg-purge-$scenario: $(ls -la "$r"/etc/default/kiosk* 2>&1 | head -3) $(tail -3 <<<"$out")"
  fi
fi
ZZSCENARIO
# Side by side (each its own overlay and namespace), their lines in order.
for scenario in fresh conffile control; do
  { unshare --mount --propagation private -- bash "$pkgs/scenario.sh" "$pkgs" "$scenario" \
      || no "deb-dpkg-$scenario" "the scenario could not run (unshare --mount)"; } > "$pkgs/$scenario.out" 2>&1 &
done
wait
cat "$pkgs/fresh.out" "$pkgs/conffile.out" "$pkgs/control.out"
