#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""What the docs say against what the checkout has: the checks that catch a manual drifting away.

    harness/docs/drift.py fuzz                      the fuzz targets
    harness/docs/drift.py make                      the `make` targets the docs name
    harness/docs/drift.py kiosk-dev --kiosk-dev PATH  the `kiosk-dev` commands the docs name
    harness/docs/drift.py paths                     the checkout's paths the docs name

The docs are README.md, docs/**/*.md and deploy/examples/README.md (docs/changes.md is history:
only its fuzz targets' names are checked). Each check prints its problems, then one summary line,
and exits 1 when it found one (2 on a wrong command line); `harness/docs/run.sh` runs them all.
  - fuzz: the Makefile's FUZZ_TARGETS (SEEDS:EXECUTABLE), the executables of Fuzz/Package.swift and
    the folders Fuzz/Sources/Fuzz* are the same list, each with its seeds in Fuzz/Corpus/SEEDS;
    every Fuzz* name in the docs is one of them; docs/development.md names every one; and a count
    of fuzz targets in the docs ("ten targets"; not in docs/measurements/, whose runs keep the
    count of their day) is the list's length.
  - make: every `make TARGET` in a code span or a shell block is a target of the Makefile (or of
    plugins/*/Makefile, which the docs name for the libcamera plugin).
  - kiosk-dev: every `kiosk-dev COMMAND` in a code span is a command `kiosk-dev --help` lists.
  - paths: every path of the checkout in a code span (Sources/, Tests/, harness/, deploy/, Fuzz/,
    plugins/, docs/, .ci/) exists; a glob must match something; a placeholder in capitals (NAME,
    SEEDS, ...), what .gitignore names and what a run makes (Fuzz/Crashes/) are not checked.
"""
import fnmatch
import glob
import os
import re
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NUMBERS = {w: n for n, w in enumerate("zero one two three four five six seven eight nine ten eleven twelve "
                                      "thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty".split())}
PLACEHOLDERS = {"NAME", "SEEDS", "EXECUTABLE", "TIER", "FILE", "DIR", "PATH", "N", "WORKLOAD", "Concern"}
# Paths a run makes, named in the docs before they exist: Fuzz/run.sh writes a crash there.
MADE_BY_RUNS = ("Fuzz/Crashes",)
PATH_ROOTS = ("Sources/", "Tests/", "harness/", "deploy/", "Fuzz/", "plugins/", "docs/", ".ci/")


def docs(history=False):
    files = [os.path.join(REPO, "README.md")] + sorted(glob.glob(os.path.join(REPO, "docs", "**", "*.md"), recursive=True)) \
        + [os.path.join(REPO, "deploy", "examples", "README.md")]
    return [f for f in files if os.path.exists(f) and (history or os.path.relpath(f, REPO) != "docs/changes.md")]


def read(path):
    return open(path, encoding="utf-8").read()


def flat(text):
    """The text with line breaks and indents folded to one space (a code span may wrap)."""
    return re.sub(r"\s+", " ", text)


def rel(path):
    return os.path.relpath(path, REPO)


def code_spans(text):
    """The contents of `code spans` and of fenced blocks, each folded to one line."""
    out = []
    fences = re.findall(r"```[^\n]*\n(.*?)```", text, flags=re.S)
    for block in fences:
        out += [line.strip() for line in block.splitlines()]
    rest = re.sub(r"```.*?```", "", text, flags=re.S)
    out += [flat(span).strip() for span in re.findall(r"`([^`]+)`", rest)]
    return out


def makefile_targets():
    targets = set()
    for mk in [os.path.join(REPO, "Makefile")] + glob.glob(os.path.join(REPO, "plugins", "*", "Makefile")):
        for line in open(mk, encoding="utf-8"):
            m = re.match(r"^([A-Za-z0-9_.%-]+(?:\s+[A-Za-z0-9_.%-]+)*)\s*::?(?!=)", line)
            if m and not line.startswith("\t"):
                targets.update(m.group(1).split())
    return targets


def fuzz_lists():
    """(the Makefile's [(seeds, executable)], Fuzz/Package.swift's executables, Fuzz/Sources's folders)."""
    text = read(os.path.join(REPO, "Makefile")).replace("\\\n", " ")
    m = re.search(r"^FUZZ_TARGETS\s*:?=(.*)$", text, flags=re.M)
    if not m:
        sys.exit("drift.py: the Makefile has no FUZZ_TARGETS")
    make = [tuple(t.split(":", 1)) for t in m.group(1).split()]
    package = re.findall(r'\.executableTarget\(\s*name:\s*"([^"]+)"', read(os.path.join(REPO, "Fuzz", "Package.swift")))
    folders = sorted(os.path.basename(d) for d in glob.glob(os.path.join(REPO, "Fuzz", "Sources", "Fuzz*")) if os.path.isdir(d))
    return make, package, folders


def check_fuzz():
    problems = []
    make, package, folders = fuzz_lists()
    names = [exe for _, exe in make]
    if sorted(names) != sorted(package):
        problems.append(f"the Makefile's FUZZ_TARGETS ({' '.join(sorted(names))}) are not Fuzz/Package.swift's executables ({' '.join(sorted(package))})")
    if sorted(names) != folders:
        problems.append(f"the Makefile's FUZZ_TARGETS are not the folders Fuzz/Sources/Fuzz* ({' '.join(folders)})")
    for seeds, exe in make:
        if not os.path.isdir(os.path.join(REPO, "Fuzz", "Corpus", seeds)):
            problems.append(f"{exe}: no seeds in Fuzz/Corpus/{seeds}")
    known = set(names)
    for f in docs(history=True):
        for name in sorted(set(re.findall(r"\bFuzz[A-Z][A-Za-z0-9]*", read(f)))):
            if name not in known and name[4:] not in PLACEHOLDERS:
                problems.append(f"{rel(f)}: names {name}, which is not a fuzz target (FUZZ_TARGETS: {' '.join(names)})")
    guide = os.path.join(REPO, "docs", "development.md")
    missing = [n for n in names if n not in read(guide)]
    if missing:
        problems.append(f"docs/development.md does not name the fuzz target(s) {' '.join(missing)}")
    for f in docs():
        if rel(f).startswith("docs/measurements/"):
            continue
        text = flat(read(f))
        for m in re.finditer(r"\b([a-z]+|\d+) (?:(?:fuzz|libFuzzer) )?targets\b", text, flags=re.I):
            word = m.group(1).lower()
            count = int(word) if word.isdigit() else NUMBERS.get(word)
            if count is None or "fuzz" not in text[max(0, m.start() - 200):m.end()].lower():
                continue
            if count != len(names):
                problems.append(f"{rel(f)}: says \"{m.group(0)}\"; the fuzz targets are {len(names)}")
    for p in problems:
        print("drift: " + p)
    print(f"drift.py: {len(names)} fuzz targets in the Makefile, Fuzz/Package.swift, Fuzz/Sources and the docs; {len(problems)} problems")
    return 1 if problems else 0


def check_make():
    targets = makefile_targets()
    problems, count = [], 0
    for f in docs():
        for span in code_spans(read(f)):
            for m in re.finditer(r"(?:^|[;&|(]\s*)make ([a-z][A-Za-z0-9_.*-]*)", span):
                count += 1
                if not fnmatch.filter(targets, m.group(1)):
                    problems.append(f"{rel(f)}: `make {m.group(1)}`: no such target in the Makefile")
    for p in sorted(set(problems)):
        print("drift: " + p)
    print(f"drift.py: {count} `make` commands named, {len(set(problems))} unknown")
    return 1 if problems else 0


def check_kiosk_dev(binary):
    try:
        helptext = subprocess.run([binary, "--help"], capture_output=True, text=True, timeout=60).stdout
    except OSError as e:
        print(f"drift: {binary} --help: {e}")
        return 1
    commands = set(re.findall(r"^\s+kiosk-dev ([a-z][a-z0-9-]*)", helptext, flags=re.M))
    if not commands:
        print(f"drift: {binary} --help lists no command")
        return 1
    problems, count = [], 0
    for f in docs():
        for span in code_spans(read(f)):
            for m in re.finditer(r"(?:^|[;&|(]\s*|/)kiosk-dev ([a-z][a-z0-9-]*)", span):
                count += 1
                if m.group(1) not in commands:
                    problems.append(f"{rel(f)}: `kiosk-dev {m.group(1)}`: kiosk-dev --help has no such command")
    for p in sorted(set(problems)):
        print("drift: " + p)
    print(f"drift.py: {count} `kiosk-dev` commands named ({len(commands)} exist), {len(set(problems))} unknown")
    return 1 if problems else 0


def ignored(path):
    """Whether .gitignore names the path (or a folder above it): made by a run, not kept."""
    try:
        patterns = [p.strip() for p in open(os.path.join(REPO, ".gitignore"), encoding="utf-8") if p.strip() and not p.startswith("#")]
    except OSError:
        return False
    parts = path.rstrip("/").split("/")
    for i in range(1, len(parts) + 1):
        sub = "/".join(parts[:i])
        for p in patterns:
            p = p.rstrip("/")
            if fnmatch.fnmatch(sub, p.lstrip("/")) or (not p.startswith("/") and fnmatch.fnmatch(parts[i - 1], p)):
                return True
    return False


def check_paths():
    problems, count = [], 0
    for f in docs():
        for span in code_spans(read(f)):
            for token in span.split():
                token = token.strip("()[],;:'\"").split(":")[0]
                if not token.startswith(PATH_ROOTS) or "$" in token or "{" in token:
                    continue
                count += 1
                if glob.glob(os.path.join(REPO, token)):
                    continue
                if any(w in PLACEHOLDERS for w in re.findall(r"[A-Z]{3,}|Concern", token)) or ignored(token) \
                        or token.rstrip("/").startswith(MADE_BY_RUNS):
                    continue
                problems.append(f"{rel(f)}: `{token}`: no such path in the checkout")
    for p in sorted(set(problems)):
        print("drift: " + p)
    print(f"drift.py: {count} paths of the checkout named, {len(set(problems))} gone")
    return 1 if problems else 0


def main(argv):
    if len(argv) >= 1 and argv[0] == "fuzz" and len(argv) == 1:
        return check_fuzz()
    if argv == ["make"]:
        return check_make()
    if argv == ["paths"]:
        return check_paths()
    if len(argv) == 3 and argv[0] == "kiosk-dev" and argv[1] == "--kiosk-dev":
        return check_kiosk_dev(argv[2])
    print(__doc__.split("\n\n")[1], file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
