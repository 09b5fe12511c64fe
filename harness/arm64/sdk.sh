#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The arm64 Swift SDK: what the trixie root's amd64 Swift 6.0.3 needs to build the kiosk for
# Raspberry Pi OS trixie (arm64), made from Debian's archive only.
#
#   harness/arm64/sdk.sh        make (or reuse) the SDK; print its folder
#
# The folder ($KIOSK_ARM64_CACHE, default .cache/arm64 in the repository, /sdk-KEY) holds:
#   sysroot/        trixie arm64, unpacked without running arm64 code (mmdebstrap --variant=extract):
#                   the -dev packages of `make print-deps CODENAME=trixie` with everything they pull
#                   in (libc6-dev, the runtime libraries), libstdc++-14-dev, and swiftlang:arm64 for
#                   its aarch64 runtime (swift/linux: .so and .swiftmodule; swift_static/linux: the
#                   static stdlib, swiftrt.o, static-stdlib-args.lnk); the arm64 compiler binaries
#                   and the docs are deleted. var/lib/dpkg is a dpkg database made from the .debs
#                   (status, and for the packages with a shlibs or symbols file their file lists
#                   and those files), so that dpkg-shlibdeps can compute the .deb's Depends.
#   swift-sdk.json  the SwiftPM destination (`swift build --destination`, schema 4.0): target
#   toolset.json    aarch64-unknown-linux-gnu, sysroot, the arm64 swift and swift_static resource
#                   folders; the compiler and linker are the host's (`-use-ld=lld`, from swiftlang)
#   swift-build     `swift build` with that destination and pkg-config pointed into the sysroot
#   packages.txt    the .debs it was made from (name version architecture)
# The JSON files name the SDK by where it is seen from inside the trixie root, /opt/kiosk-arm64:
# the callers bind-mount the folder there (harness/arm64/build.sh). KEY covers the package list, the
# host compiler's swiftlang version (the arm64 runtime must be the very same version: its
# .swiftmodule files are read by that compiler) and FORMAT (bump it when this script changes
# what it makes). A new KEY makes a new SDK and removes the old ones.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
CACHE=${KIOSK_ARM64_CACHE:-$REPO/.cache/arm64}
MIRROR=${KIOSK_DEBIAN_MIRROR:-http://deb.debian.org/debian}
SUITE=trixie
MOUNT=/opt/kiosk-arm64
FORMAT=3

die() { echo "arm64 sdk: $*" >&2; exit 1; }

# --- the dpkg database of an extracted root (an extract hook of mmdebstrap; $1 = the root) ----------
if [ "${1:-}" = --make-dpkg-db ]; then
  root=$2
  db=$root/var/lib/dpkg
  mkdir -p "$db/info" "$db/updates" "$db/triggers"
  : > "$db/status"
  : > "$root/.packages.txt"
  ctl=$(mktemp -d)
  trap 'rm -rf "$ctl"' EXIT
  shopt -s nullglob
  debs=("$root"/var/cache/apt/archives/*.deb)
  [ ${#debs[@]} -gt 0 ] || { echo "no .deb files in $root/var/cache/apt/archives" >&2; exit 1; }
  for deb in "${debs[@]}"; do
    rm -rf "$ctl"/* && dpkg-deb -e "$deb" "$ctl"
    field() { sed -n "s/^$1: //p" "$ctl/control"; }
    pkg=$(field Package) arch=$(field Architecture)
    echo "$pkg $(field Version) $arch" >> "$root/.packages.txt"
    { grep -v '^Status:' "$ctl/control"; echo "Status: install ok installed"; echo; } >> "$db/status"
    # dpkg's name for the package's files: pkg:arch for Multi-Arch: same (info/format 1), else pkg.
    name=$pkg
    [ "$(field Multi-Arch)" = same ] && name=$pkg:$arch
    if [ -e "$ctl/symbols" ] || [ -e "$ctl/shlibs" ]; then
      for f in symbols shlibs; do if [ -e "$ctl/$f" ]; then cp "$ctl/$f" "$db/info/$name.$f"; fi; done
      dpkg-deb --fsys-tarfile "$deb" | tar -t | sed -e 's|^\./|/|' -e 's|/$||' -e 's|^$|/.|' > "$db/info/$name.list"
    else
      # Only the libraries' file lists matter (dpkg-shlibdeps asks whose a library is); the
      # others are left empty rather than unpacked a second time.
      : > "$db/info/$name.list"
    fi
  done
  echo 1 > "$db/info/format"
  sort -o "$root/.packages.txt" "$root/.packages.txt"
  exit 0
fi
[ $# -eq 0 ] || { echo "usage: $0" >&2; exit 64; }

[ "$(id -u)" = 0 ] || die "needs root (mmdebstrap, and the trixie root it builds with)"
"$REPO/harness/host-packages.sh" "arm64 sdk" mmdebstrap || die "cannot install mmdebstrap"

# The host compiler: the trixie root's swiftlang. The arm64 runtime is pinned to its version.
TROOT=$("$REPO/harness/trixie/run.sh" --root | tail -1)
[ -d "$TROOT/usr/libexec/swift" ] || die "no trixie root with swiftlang at '$TROOT' (harness/trixie/run.sh --root)"
SWIFT_VERSION=$(dpkg-query --admindir="$TROOT/var/lib/dpkg" -W -f='${Version}' swiftlang) \
  || die "swiftlang is not installed in $TROOT"

# The -dev packages the kiosk (and its tests) link, as the Makefile lists them for trixie; the
# build tools in that list (make, pkg-config) are the host's and are left out.
DEPS=$(make -s --no-print-directory -C "$REPO" print-deps CODENAME=$SUITE)   # no "Entering directory" in the list
[ -n "$DEPS" ] || die "make print-deps CODENAME=$SUITE printed no packages"
PACKAGES="libc6-dev"
for p in $DEPS; do
  case "$p" in
    *-dev) PACKAGES="$PACKAGES $p" ;;
    swiftlang) PACKAGES="$PACKAGES swiftlang=$SWIFT_VERSION" ;;
  esac
done
case " $PACKAGES " in *" swiftlang="*) ;; *) PACKAGES="$PACKAGES swiftlang=$SWIFT_VERSION" ;; esac
KEY=$(echo "format=$FORMAT $SUITE $PACKAGES" | tr ' ' '\n' | sort | sha256sum | cut -c1-12)
SDK=$CACHE/sdk-$KEY

if [ ! -e "$SDK.done" ]; then
  t0=$(date +%s)
  rm -rf "$CACHE"/sdk-* && mkdir -p "$SDK"
  echo "arm64 sdk: making $SDK (trixie arm64: $PACKAGES)" >&2
  # --variant=extract unpacks the packages and what they depend on; nothing is configured, no
  # arm64 program runs. The hook records the dpkg database before the .debs are cleaned away.
  mmdebstrap --variant=extract --architectures=arm64 --include="$(echo $PACKAGES | tr ' ' ,)" \
    --extract-hook="\"$HERE/sdk.sh\" --make-dpkg-db \"\$1\"" \
    "$SUITE" "$SDK/sysroot" "$MIRROR" > "$CACHE/mmdebstrap.log" 2>&1 \
    || { tail -20 "$CACHE/mmdebstrap.log" >&2; die "mmdebstrap failed (log: $CACHE/mmdebstrap.log)"; }
  S=$SDK/sysroot
  mv "$S/.packages.txt" "$SDK/packages.txt"
  grep -q "^swiftlang $SWIFT_VERSION arm64$" "$SDK/packages.txt" || die "the sysroot has no swiftlang $SWIFT_VERSION for arm64"
  # What a cross build does not use: the arm64 toolchain's own programs and libraries (lldb,
  # sourcekit, the compiler plugins), documentation. About 1.5 of 2.9 GB.
  rm -rf "$S"/usr/libexec/swift/{bin,libexec,share} "$S"/usr/libexec/swift/lib/{liblldb*,libLTO*,libsourcekitd*,libIndexStore*} \
         "$S"/usr/libexec/swift/lib/swift/{host,pm} "$S"/usr/share/{doc,man,info,locale} "$S"/var/cache/apt/archives/*.deb
  # Read by the Swift driver for any -sdk (else it warns on every compile); Darwin's keys.
  echo '{"CanonicalName": "debian-trixie-arm64", "DisplayName": "Debian 13 (trixie) arm64", "Version": "13.0", "VersionMap": {}}' \
    > "$S/SDKSettings.json"
  R=$S/usr/libexec/swift/lib
  for f in swift_static/linux/static-stdlib-args.lnk swift_static/linux/aarch64/swiftrt.o swift_static/linux/libswiftCore.a \
           swift/linux/aarch64/swiftrt.o swift/linux/libswiftCore.so swift/linux/libXCTest.so \
           swift/linux/Swift.swiftmodule/aarch64-unknown-linux-gnu.swiftmodule; do
    [ -e "$R/$f" ] || die "the arm64 swiftlang package has no $f"
  done

  cat > "$SDK/swift-sdk.json" <<EOF
{
  "schemaVersion": "4.0",
  "targetTriples": {
    "aarch64-unknown-linux-gnu": {
      "sdkRootPath": "$MOUNT/sysroot",
      "swiftResourcesPath": "$MOUNT/sysroot/usr/libexec/swift/lib/swift",
      "swiftStaticResourcesPath": "$MOUNT/sysroot/usr/libexec/swift/lib/swift_static",
      "toolsetPaths": ["$MOUNT/toolset.json"]
    }
  }
}
EOF
  # -sdk for the Swift frontend as well: SwiftPM passes the sysroot to clang only (-Xcc
  # --sysroot), and without it the frontend finds no arm64 glibc for its Glibc module.
  cat > "$SDK/toolset.json" <<EOF
{
  "schemaVersion": "1.0",
  "rootPath": "/usr/bin",
  "swiftCompiler": { "extraCLIOptions": ["-use-ld=lld", "-sdk", "$MOUNT/sysroot"] }
}
EOF
  cat > "$SDK/swift-build" <<EOF
#!/bin/sh
# swift build for aarch64-unknown-linux-gnu with the SDK mounted at $MOUNT (inside the trixie root).
S=$MOUNT/sysroot
export PKG_CONFIG_SYSROOT_DIR=\$S
export PKG_CONFIG_LIBDIR=\$S/usr/lib/aarch64-linux-gnu/pkgconfig:\$S/usr/share/pkgconfig
export PKG_CONFIG_PATH=\$PKG_CONFIG_LIBDIR
exec swift build --destination $MOUNT/swift-sdk.json "\$@"
EOF
  chmod 0755 "$SDK/swift-build"
  touch "$SDK.done"
  echo "arm64 sdk: made in $(( $(date +%s) - t0 )) s, $(du -sh "$SDK" | cut -f1)" >&2
fi
echo "$SDK"
