#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# harness/unmount-below.sh DIR...: every mount at or below each DIR taken down (lazily, the deepest
# first), in the caller's mount namespace; each one named on standard error. For mounts a killed
# run left behind: CI stops the jobs of a failed run without their cleanup, and a bind of
# ../shared left on a root outlived the clone it came from (a bind onto that deleted folder then
# fails with ENOENT), while `rm -rf` of a folder with /dev bound inside it would empty /dev.
set -euo pipefail
for dir in "$@"; do
  [ -e "$dir" ] || continue
  real=$(realpath "$dir")
  # /proc/self/mounts writes a space in a path as \040: such a path is not ours, and not taken down.
  awk -v d="$real" '$2 == d || index($2, d "/") == 1 { print length($2) " " $2 }' /proc/self/mounts \
    | sort -rn | cut -d' ' -f2- | while read -r target; do
      umount -l "$target" && echo "unmounted $target (left by an earlier run)" >&2
    done
done
