#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds build/kiosk_<version>_<arch>.deb from a release binary.
#
#   deploy/build-deb.sh                  make release, then package its binary
#   deploy/build-deb.sh --binary PATH    package a binary built before (what `make deb` does)
#   deploy/build-deb.sh --out DIR        write the .deb into DIR (default: build/)
#   deploy/build-deb.sh --binary PATH --arch arm64 --sysroot DIR
#                                        a binary cross-built for another Debian architecture,
#                                        Depends from that architecture's libraries in DIR
#
# Environment: VERSION (default: from `kiosk --version`; with another --arch, run under qemu-user
# on the sysroot's libraries), MAINTAINER (default: the last commit's author), SOURCE_DATE_EPOCH
# (default: the last commit's time; makes the .deb reproducible).
# Needs dpkg-dev (dpkg-deb, dpkg-shlibdeps) and binutils (strip); not root (--root-owner-group).
# Another --arch needs that architecture's strip (binutils-aarch64-linux-gnu for arm64) and a
# sysroot with a dpkg database in var/lib/dpkg (status; the file lists and shlibs/symbols files
# of its library packages), as harness/arm64/sdk.sh makes one: dpkg-shlibdeps reads it instead of
# the host's, so Depends names the target's own library packages and versions.
#
# The package: /usr/bin/kiosk (stripped; the Swift runtime is linked in, so no /opt/swift),
# /lib/systemd/system/kiosk.service (ExecStart=/usr/bin/kiosk), /usr/share/kiosk/kiosk.env (the
# commented defaults, which postinst copies to /etc/default/kiosk when there is none: no conffile,
# see below), /usr/share/doc/kiosk/{README.md.gz,docs/*.md.gz,kiosk.env,copyright,changelog.gz},
# the manual pages kiosk(8) and kiosk.conf(5) in /usr/share/man. Depends: from
# dpkg-shlibdeps on the binary, plus adduser (postinst). The maintainer scripts do what debhelper's
# dh_installsystemd would: enable and start on install, restart on upgrade, stop on remove.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
binary=${KIOSK_BINARY:-}
out=$repo/build
target_arch=
sysroot=
while [ $# -gt 0 ]; do
  case "$1" in
    --binary) binary=${2:?--binary needs a path}; shift 2 ;;
    --binary=*) binary=${1#--binary=}; shift ;;
    --out) out=${2:?--out needs a folder}; shift 2 ;;
    --out=*) out=${1#--out=}; shift ;;
    --arch) target_arch=${2:?--arch needs a Debian architecture}; shift 2 ;;
    --arch=*) target_arch=${1#--arch=}; shift ;;
    --sysroot) sysroot=${2:?--sysroot needs a folder}; shift 2 ;;
    --sysroot=*) sysroot=${1#--sysroot=}; shift ;;
    -h|--help) sed -n '3,19s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) echo "build-deb.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done

if [ -z "$binary" ]; then
  make -C "$repo" release >&2
  binary=$(cd "$repo" && PATH=$PATH:/opt/swift/usr/bin swift build -c release --static-swift-stdlib --show-bin-path)/kiosk
fi
[ -x "$binary" ] || { echo "build-deb.sh: no executable binary at '$binary'" >&2; exit 1; }

arch=$(dpkg --print-architecture)
cross=
strip_tool=strip
if [ -n "$target_arch" ] && [ "$target_arch" != "$arch" ]; then
  cross=$target_arch
  [ -n "$sysroot" ] && [ -f "$sysroot/var/lib/dpkg/status" ] \
    || { echo "build-deb.sh: --arch $cross needs --sysroot DIR with a dpkg database (harness/arm64/sdk.sh)" >&2; exit 1; }
  sysroot=$(cd "$sysroot" && pwd)
  multiarch=$(dpkg-architecture -a"$cross" -qDEB_HOST_MULTIARCH 2>/dev/null)
  strip_tool=$(dpkg-architecture -a"$cross" -qDEB_HOST_GNU_TYPE 2>/dev/null)-strip
  command -v "$strip_tool" >/dev/null || { echo "build-deb.sh: no $strip_tool (Debian package binutils-$multiarch)" >&2; exit 1; }
  if [ -z "${VERSION:-}" ]; then
    case "$cross" in arm64) qemu=qemu-aarch64 ;; armhf) qemu=qemu-arm ;; *) qemu=qemu-$cross ;; esac
    command -v "$qemu" >/dev/null || { echo "build-deb.sh: set VERSION, or install qemu-user to run the $cross binary" >&2; exit 1; }
    VERSION=$("$qemu" -L "$sysroot" "$binary" --version | awk 'NR == 1 { print $2 }')
  fi
  arch=$cross
fi
VERSION=${VERSION:-$("$binary" --version | awk 'NR == 1 { print $2 }')}
[[ "$VERSION" =~ ^[0-9][A-Za-z0-9.+~]*$ ]] || { echo "build-deb.sh: bad version '$VERSION'" >&2; exit 1; }
case "$(LC_ALL=C readelf -h "$binary" | sed -n 's/^ *Machine: *//p')" in
  *X86-64*) elf_arch=amd64 ;;
  AArch64) elf_arch=arm64 ;;
  ARM) elf_arch=armhf ;;
  *) elf_arch=unknown ;;
esac
[ "$elf_arch" = "$arch" ] || { echo "build-deb.sh: the binary is for '$elf_arch', the package for '$arch' (build the .deb where the binary was built, or give --arch and --sysroot)" >&2; exit 1; }
if [ -n "$cross" ]; then
  # ldd cannot load a foreign binary: its NEEDED list says the same.
  dynamic_swift=$(LC_ALL=C readelf -d "$binary" | grep -E 'NEEDED.*\[lib(swiftCore|Foundation|XCTest)' || true)
else
  dynamic_swift=$(LC_ALL=C ldd "$binary" | grep '/opt/swift\|libswiftCore\|libFoundation' || true)
fi
if [ -n "$dynamic_swift" ]; then
  echo "build-deb.sh: $binary links the Swift runtime dynamically; build it with --static-swift-stdlib" >&2
  exit 1
fi
MAINTAINER=${MAINTAINER:-$(git -C "$repo" log -1 --format='%an <%ae>' 2>/dev/null || true)}
[ -n "$MAINTAINER" ] || MAINTAINER="kiosk maintainers <root@localhost>"
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git -C "$repo" log -1 --format=%ct 2>/dev/null || date +%s)}

name=kiosk_${VERSION}_${arch}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
root=$work/$name
umask 022
mkdir -p "$root/DEBIAN" "$root/usr/bin" "$root/lib/systemd/system" "$root/usr/share/kiosk" \
         "$root/usr/share/doc/kiosk/docs" "$root/usr/share/lintian/overrides" \
         "$root/usr/share/man/man8" "$root/usr/share/man/man5"

# Files.
install -m 0755 "$binary" "$root/usr/bin/kiosk"
$strip_tool --strip-unneeded --remove-section=.comment --remove-section=.note "$root/usr/bin/kiosk"
sed -e 's|^ExecStart=/usr/local/bin/kiosk|ExecStart=/usr/bin/kiosk|' \
    -e 's|file:///usr/local/share/doc/kiosk/README.md|file:///usr/share/doc/kiosk/README.md.gz|' \
    "$repo/deploy/kiosk.service" > "$root/lib/systemd/system/kiosk.service"
grep -q '^ExecStart=/usr/bin/kiosk run$' "$root/lib/systemd/system/kiosk.service" \
  || { echo "build-deb.sh: could not point ExecStart at /usr/bin/kiosk" >&2; exit 1; }
# Setup at the door: the path unit watches for the code the kiosk took; the service applies it as root.
install -m 0644 "$repo/deploy/kiosk-setup.path" "$root/lib/systemd/system/kiosk-setup.path"
sed -e 's|/usr/local/bin/kiosk|/usr/bin/kiosk|' "$repo/deploy/kiosk-setup.service" > "$root/lib/systemd/system/kiosk-setup.service"
# /etc/default/kiosk is not shipped: a conffile is the admin's file to dpkg, and `kiosk setup
# --apply` (a code shown at the door) rewrites it, so the next upgrade that changed the defaults
# would stop at dpkg's conffile question on a door with no one to answer it. The package ships
# the commented defaults here; postinst copies them to /etc/default/kiosk when there is none and
# never touches one that is there; postrm removes it on purge (Debian policy 10.7.3).
sed -e 's|/usr/local/share/doc/kiosk or /usr/share/doc/kiosk|/usr/share/doc/kiosk|' \
    "$repo/deploy/kiosk.env" > "$root/usr/share/kiosk/kiosk.env"
install -m 0644 "$repo/deploy/kiosk.env" "$root/usr/share/doc/kiosk/kiosk.env"
# The unit's drop-in for a kiosk with a broker: not active, copied by the installer (docs/building.md).
install -D -m 0644 "$repo/deploy/mqtt.conf" "$root/usr/share/kiosk/mqtt.conf"
gzip -9n < "$repo/README.md" > "$root/usr/share/doc/kiosk/README.md.gz"
for f in "$repo"/docs/*.md; do gzip -9n < "$f" > "$root/usr/share/doc/kiosk/docs/${f##*/}.gz"; done
# The manual pages, gzipped as Debian wants them (`man kiosk`, `man kiosk.conf`).
gzip -9n < "$repo/docs/man/kiosk.8" > "$root/usr/share/man/man8/kiosk.8.gz"
gzip -9n < "$repo/docs/man/kiosk.conf.5" > "$root/usr/share/man/man5/kiosk.conf.5.gz"
# The libcamera plugin's source (docs/installing.md, "The camera"): built on the Pi against its own
# libcamera with `make -C /usr/share/kiosk/libcamera-plugin install`; never built into the package.
plugin_dir=$root/usr/share/kiosk/libcamera-plugin
install -D -m 0644 "$repo/plugins/libcamera/Makefile" "$plugin_dir/Makefile"
install -m 0644 "$repo/plugins/libcamera/kiosk_libcamera.cpp" "$repo/plugins/libcamera/lc-probe.c" \
  "$repo/Sources/CLibcamera/include/kiosk_libcamera.h" "$repo/Sources/CLibcamera/loader.c" \
  "$repo/Sources/CPlatform/include/kiosk_dlopen.h" "$plugin_dir/"

year=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y)
cat > "$root/usr/share/doc/kiosk/copyright" <<EOF
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: kiosk
Upstream-Contact: $MAINTAINER
License: Apache-2.0
Comment: What usr/bin/kiosk holds or loads besides the kiosk's own code:
 .
 Linked in (--static-swift-stdlib), from the Swift toolchain: the Swift standard library,
 Dispatch and Foundation (swift-corelibs-foundation, swift-foundation), Apache-2.0 with the
 Runtime Library Exception (no attribution is needed in binary form); Foundation carries ICU's
 data (swift-foundation-icu), under the Unicode License v3 (Unicode-3.0).
 .
 Used as shared libraries from their Debian packages, each under its own licence (see
 /usr/share/doc/PACKAGE/copyright): zbar (libzbar0, LGPL-2.1+), libv4l2 and libv4lconvert
 (libv4l-0, LGPL-2.1+), libgpiod (libgpiod2 or libgpiod3, LGPL-2.1+), libpng (libpng16-16,
 libpng-2.0), libqrencode (libqrencode4, LGPL-2.1+), libsystemd (libsystemd0, LGPL-2.1+),
 zxing-cpp (libzxing2 or libzxing3, Apache-2.0), libmosquitto (libmosquitto1, EPL-2.0 or EDL-1.0)
 with OpenSSL (libssl3, Apache-2.0; its libcrypto also checks the credentials' signatures),
 zlib (zlib1g, Zlib: the credentials' inflate), ALSA's libasound (libasound2 or libasound2t64,
 LGPL-2.1+: the speaker), the
 C and C++ runtimes (libc6, libstdc++6, libgcc-s1: LGPL-2.1+, and GPL-3+ with the GCC Runtime
 Library Exception).

Files: *
Copyright: $year kiosk developers
License: Apache-2.0

License: Apache-2.0
 Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file
 except in compliance with the License. You may obtain a copy of the License at
 .
 http://www.apache.org/licenses/LICENSE-2.0
 .
 Unless required by applicable law or agreed to in writing, software distributed under the
 License is distributed on an "AS IS" BASIS, WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND,
 either express or implied. See the License for the specific language governing permissions
 and limitations under the License.
 .
 On Debian systems, the complete text of the Apache License, Version 2.0 can be found in
 "/usr/share/common-licenses/Apache-2.0".
EOF

date_r=$(LC_ALL=C date -u -R -d "@$SOURCE_DATE_EPOCH")
cat <<EOF | gzip -9n > "$root/usr/share/doc/kiosk/changelog.gz"
kiosk ($VERSION) unstable; urgency=medium

  * Built from the kiosk repository; what changed for users is in
    docs/changes.md.gz.

 -- $MAINTAINER  $date_r
EOF

# Lintian overrides, each with its reason.
cat > "$root/usr/share/lintian/overrides/kiosk" <<'EOF'
# The service is built for systemd alone: readiness and the watchdog are sd_notify, the sandbox
# and the device allow-list are unit settings. A sysvinit script could do none of it.
kiosk: package-supports-alternative-init-but-no-init.d-script [lib/systemd/system/kiosk.service]
# The binary is linked by the Swift toolchain (swift build), not with dpkg-buildflags: no -z now,
# and Swift code calls libc without _FORTIFY_SOURCE wrappers (its own bounds checks instead).
kiosk: hardening-no-bindnow [usr/bin/kiosk]
kiosk: hardening-no-fortify-functions [usr/bin/kiosk]
# The "misspellings" are in data linked in with the Swift runtime and Foundation (ICU tables,
# truncated identifiers), not in messages of the kiosk's own.
kiosk: spelling-error-in-binary * [usr/bin/kiosk]
EOF

# Control files. Depends: what the binary links (dpkg-shlibdeps), plus adduser for postinst, plus
# libmosquitto1, which the kiosk loads on first use (dlopen, issue 23: KIOSK_MQTT_URL) and so
# dpkg-shlibdeps cannot see; installed, it costs disk, not memory, until MQTT is configured.
# Recommends: libical, loaded likewise only when the access rules name a holidays calendar (issue
# 33); its name is libical3 in bookworm and libical3t64 from trixie on. Without it such rules are
# refused at start with a message saying what to install.
# libasound, loaded likewise only when KIOSK_SPEAKER is set, is a dependency (libasound2 in bookworm,
# libasound2t64 from trixie on): a speaker is configured by a variable alone, and a Pi's image has
# it anyway. espeak-ng is recommended: it renders the phrases at start into /var/cache/kiosk, and
# without it a kiosk whose phrases are all cached still speaks (otherwise speech is off, said).
# And libevdev2 (the same name on both), loaded only for a USB keypad (KIOSK_KEYPAD=evdev:...,
# issue 54): recommended.
mkdir -p "$work/shlibs/debian"
printf 'Source: kiosk\n\nPackage: kiosk\nArchitecture: any\n' > "$work/shlibs/debian/control"
shlibdeps=(dpkg-shlibdeps)
if [ -n "$cross" ]; then
  # The sysroot's dpkg database, its file lists moved under the sysroot where dpkg-shlibdeps
  # finds the libraries (-l): dpkg-query --search then names their packages.
  admin=$work/dpkg
  mkdir -p "$admin/info" "$admin/updates" "$admin/triggers"
  cp "$sysroot/var/lib/dpkg/status" "$admin/status"
  for f in "$sysroot"/var/lib/dpkg/info/*; do
    case "$f" in
      *.list) sed "s|^/|$sysroot/|" "$f" > "$admin/info/${f##*/}" ;;
      *) cp "$f" "$admin/info/" ;;
    esac
  done
  shlibdeps=(env DEB_HOST_ARCH="$cross" dpkg-shlibdeps --admindir="$admin"
             -l"$sysroot/usr/lib/$multiarch" -l"$sysroot/lib/$multiarch")
fi
shlibs=$(cd "$work/shlibs" && "${shlibdeps[@]}" -O -e"$root/usr/bin/kiosk" 2>"$work/shlibdeps.err" \
         | sed -n 's/^shlibs:Depends=//p') \
  || { cat "$work/shlibdeps.err" >&2; exit 1; }
[ -n "$shlibs" ] || { echo "build-deb.sh: dpkg-shlibdeps found no dependencies" >&2; cat "$work/shlibdeps.err" >&2; exit 1; }

installed_size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
cat > "$root/DEBIAN/control" <<EOF
Package: kiosk
Version: $VERSION
Architecture: $arch
Maintainer: $MAINTAINER
Installed-Size: $installed_size
Depends: adduser, $shlibs, libmosquitto1, libasound2t64 | libasound2
Recommends: libical3t64 | libical3, espeak-ng, libevdev2
Section: misc
Priority: optional
Description: headless barcode and QR-code scanner service for a door kiosk
 kiosk takes frames from a V4L2 camera (libv4l2), reads QR codes and 1D
 barcodes with zbar inside a fixed region of interest, reports each code once
 in the journal and sounds a buzzer on a GPIO line (libgpiod). It runs as the
 systemd service kiosk.service, as the unprivileged user kiosk in the video
 and gpio groups; its settings are in /etc/default/kiosk.
 .
 A Camera Module on Raspberry Pi OS goes through libcamera, with a small plugin
 built on the Pi (/usr/share/doc/kiosk/docs/installing.md.gz, "The camera").
EOF
cat > "$root/DEBIAN/postinst" <<'EOF'
#!/bin/sh
set -e

if [ "$1" = configure ]; then
	# The settings: the commented defaults when there are none. Not a conffile (kiosk setup
	# rewrites it; dpkg would then ask on each upgrade); a file there, an earlier version's
	# conffile included, is kept as it is.
	if [ ! -e /etc/default/kiosk ] && [ ! -L /etc/default/kiosk ]; then
		cp /usr/share/kiosk/kiosk.env /etc/default/kiosk.dpkg-new
		chmod 0644 /etc/default/kiosk.dpkg-new
		mv /etc/default/kiosk.dpkg-new /etc/default/kiosk
	fi
	# The service's user, in the groups that own /dev/video*, /dev/gpiochip*, the serial ports (dialout), /dev/snd/* (audio) and a USB keypad (input).
	for g in video gpio dialout audio input; do
		getent group "$g" >/dev/null || addgroup --quiet --system "$g"
	done
	if ! getent passwd kiosk >/dev/null; then
		adduser --quiet --system --group --no-create-home --home /nonexistent \
			--gecos "kiosk barcode scanner" kiosk
	fi
	for g in video gpio dialout audio input; do
		id -nG kiosk | tr ' ' '\n' | grep -qx "$g" || adduser --quiet kiosk "$g"
	done
fi

# As dh_installsystemd writes it: enable on first install, keep the admin's choice on upgrade.
if [ "$1" = "configure" ] || [ "$1" = "abort-upgrade" ] || [ "$1" = "abort-deconfigure" ] || [ "$1" = "abort-remove" ] ; then
	for unit in kiosk.service kiosk-setup.path; do
		deb-systemd-helper unmask "$unit" >/dev/null || true
		if deb-systemd-helper --quiet was-enabled "$unit"; then
			deb-systemd-helper enable "$unit" >/dev/null || true
		else
			deb-systemd-helper update-state "$unit" >/dev/null || true
		fi
	done
fi
if [ "$1" = "configure" ] || [ "$1" = "abort-upgrade" ] || [ "$1" = "abort-deconfigure" ] || [ "$1" = "abort-remove" ] ; then
	if [ -d /run/systemd/system ]; then
		systemctl --system daemon-reload >/dev/null || true
		if [ -n "$2" ]; then
			_dh_action=restart
		else
			_dh_action=start
		fi
		deb-systemd-invoke $_dh_action 'kiosk.service' 'kiosk-setup.path' >/dev/null || true
	fi
fi
EOF

cat > "$root/DEBIAN/prerm" <<'EOF'
#!/bin/sh
set -e

if [ -d /run/systemd/system ] && [ "$1" = remove ]; then
	deb-systemd-invoke stop 'kiosk-setup.path' 'kiosk.service' >/dev/null || true
fi
EOF

cat > "$root/DEBIAN/postrm" <<'EOF'
#!/bin/sh
set -e

if [ -d /run/systemd/system ] && [ "$1" = remove ]; then
	systemctl --system daemon-reload >/dev/null || true
fi
if [ "$1" = "remove" ]; then
	if [ -x "/usr/bin/deb-systemd-helper" ]; then
		deb-systemd-helper mask 'kiosk.service' 'kiosk-setup.path' >/dev/null || true
	fi
fi
if [ "$1" = "purge" ]; then
	if [ -x "/usr/bin/deb-systemd-helper" ]; then
		deb-systemd-helper purge 'kiosk.service' 'kiosk-setup.path' >/dev/null || true
		deb-systemd-helper unmask 'kiosk.service' 'kiosk-setup.path' >/dev/null || true
	fi
	# The settings postinst made (or an earlier version's conffile, which dpkg keeps as obsolete),
	# with what a write cut short left beside it (kiosk setup writes kiosk.new, then renames).
	rm -f /etc/default/kiosk /etc/default/kiosk.new /etc/default/kiosk.dpkg-new
	# The service's state (StateDirectory=kiosk). The user kiosk is left in place, as Debian
	# packages do: files elsewhere may still belong to it (userdel kiosk removes it).
	rm -rf /var/lib/kiosk
fi
EOF

chmod 0755 "$root/DEBIAN/postinst" "$root/DEBIAN/prerm" "$root/DEBIAN/postrm"
(cd "$root" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' \
   | LC_ALL=C sort -z | xargs -0 md5sum > DEBIAN/md5sums)
chmod 0644 "$root/DEBIAN/control" "$root/DEBIAN/md5sums"
find "$root" -type d -exec chmod 0755 {} +
find "$root" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +

mkdir -p "$out"
dpkg-deb --root-owner-group -Zxz --build "$root" "$out/$name.deb" >/dev/null
echo "$out/$name.deb"
