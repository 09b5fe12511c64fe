#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Every local link of the manual leads somewhere: README.md, docs/*.md, docs/design/*.md,
docs/measurements/*.md and deploy/examples/README.md link to a file or folder of the checkout
(and to a heading of it, after '#', as GitHub makes anchors).
Prints each broken link and exits 1; `harness/docs/run.sh` runs it."""
import glob
import os
import re
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def anchors(path):
    out, fence = set(), False
    for line in open(path, encoding="utf-8"):
        if line.startswith("```"):
            fence = not fence
        if not fence and re.match(r"#{1,6} ", line):
            title = re.sub(r"^#+ ", "", line.strip()).lower()
            out.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return out


def main():
    files = [os.path.join(REPO, "README.md")] + sorted(glob.glob(os.path.join(REPO, "docs", "**", "*.md"), recursive=True)) \
        + [os.path.join(REPO, "deploy", "examples", "README.md")]
    broken, count = [], 0
    for f in files:
        text = re.sub(r"```.*?```", "", open(f, encoding="utf-8").read(), flags=re.S)
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target):
                continue
            count += 1
            path, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(f), path)) if path else f
            rel = os.path.relpath(f, REPO)
            if not os.path.exists(dest):
                broken.append(f"{rel}: {target}: no such file")
            elif anchor and dest.endswith(".md") and anchor not in anchors(dest):
                broken.append(f"{rel}: {target}: no such heading")
    for b in broken:
        print("broken link: " + b)
    print(f"links.py: {count} local links, {len(broken)} broken")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
