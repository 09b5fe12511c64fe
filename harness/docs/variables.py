#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The variables' reference, made from the code's one table, and its checks (issue 36).

    harness/docs/variables.py write --table FILE    rewrite docs/reference.md's table and docs/man/kiosk.conf.5
    harness/docs/variables.py check --table FILE    the variables' checks; exit 1 on a problem

FILE is what `kiosk-dev variables` prints (Configuration.table: NAME, default, what is accepted,
tab-separated; `-` reads standard input). The meaning of each variable is docs/man/variables.txt.
`make docs` writes, `make test-docs` checks:
  - every variable of the code has a meaning, and every meaning a variable of the code;
  - docs/reference.md and kiosk.conf(5) are what `write` makes now (so they name exactly the
    code's variables, with its defaults and accepted values);
  - ../shared/docs/interface.md (or $KIOSK_SHARED/docs/interface.md) names exactly the code's
    variables, but for NOT_BUILT below; without that file this leg is skipped, and said so.
"""
import os
import re
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MEANINGS = os.path.join(REPO, "docs/man/variables.txt")
REFERENCE = os.path.join(REPO, "docs/reference.md")
MANPAGE = os.path.join(REPO, "docs/man/kiosk.conf.5")
BEGIN = "<!-- variables: made by `make docs` from the code (kiosk-dev variables) and docs/man/variables.txt; edit those -->"
END = "<!-- end of variables -->"

# In interface.md, not built yet: each is a known gap with its issue. A name that is built (or
# leaves interface.md) must leave this list, and a new gap must join it with its issue, or the check fails.
NOT_BUILT = {
}
# KIOSK_* names interface.md uses that are not settings: the scan program's environment (KIOSK_DURESS:
# issue 54) and a journal field.
NOT_SETTINGS = {"KIOSK_CODE", "KIOSK_SYMBOLOGY", "KIOSK_EVENT", "KIOSK_DURESS"}


def read_table(path):
    text = sys.stdin.read() if path == "-" else open(path, encoding="utf-8").read()
    rows = []
    for line in text.splitlines():
        name, default, accepted = line.split("\t")
        rows.append((name, default, accepted))
    if not rows:
        sys.exit("variables.py: the code's table is empty")
    return rows


def read_meanings():
    """[(group or None, name, meaning)] in the file's order."""
    out, group = [], None
    for n, line in enumerate(open(MEANINGS, encoding="utf-8"), 1):
        line = line.rstrip("\n")
        if not line or (line.startswith("#") and not line.startswith("## ")):
            continue
        if line.startswith("## "):
            group = line[3:].strip()
            continue
        m = re.match(r"(KIOSK_[A-Z0-9_]+) (.+)$", line)
        if not m:
            sys.exit(f"variables.py: {MEANINGS}:{n}: not NAME MEANING")
        out.append((group, m.group(1), m.group(2)))
        group = None
    return out


def joined(rows, meanings):
    """The code's rows in its order, each with its meaning and the group heading that starts there."""
    by_name = {name: (group, meaning) for group, name, meaning in meanings}
    return [(by_name.get(name, (None, ""))[0], name, default, accepted, by_name.get(name, (None, ""))[1])
            for name, default, accepted in rows]


# --- Markdown -------------------------------------------------------------------------------------

def md_cell(text):
    return text.replace("|", "\\|")


def reference_block(entries):
    out = [BEGIN, ""]
    for group, name, default, accepted, meaning in entries:
        if group:
            if out[-1] != "":
                out.append("")
            out += [f"### {group}", "", "| variable | default | accepted | meaning |", "|---|---|---|---|"]
        out.append(f"| `{name}` | `{md_cell(default)}` | {md_cell(accepted)} | {md_cell(meaning)} |")
    out += ["", END]
    return "\n".join(out)


def reference_text(entries):
    text = open(REFERENCE, encoding="utf-8").read()
    if BEGIN not in text or END not in text:
        sys.exit(f"variables.py: {REFERENCE} has no {BEGIN} ... {END}")
    head, rest = text.split(BEGIN, 1)
    tail = rest.split(END, 1)[1]
    return head + reference_block(entries) + tail


# --- roff -----------------------------------------------------------------------------------------

def roff_text(md):
    """Markdown inline text as roff: code and strong in bold, links as their text."""
    md = re.sub(r"\[([^\]]+)\]\([^)]+\)", r"\1", md)
    out, i = [], 0
    for part in re.split(r"(`[^`]*`|\*\*[^*]+\*\*)", md):
        if part.startswith("`") and part.endswith("`") and len(part) >= 2:
            out.append("\\fB" + roff_escape(part[1:-1]) + "\\fR")
        elif part.startswith("**") and part.endswith("**"):
            out.append("\\fB" + roff_escape(part[2:-2]) + "\\fR")
        else:
            out.append(roff_escape(part))
    return "".join(out)


def roff_escape(text):
    """Backslashes and minus signs escaped; a comma may end a line (the long comma lists)."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    return re.sub(r",(?=\S)", ",\\\\:", text)


def roff_lines(text):
    """A paragraph as roff source lines: no line starts with a control character."""
    line = roff_text(text)
    return "\\&" + line if line.startswith((".", "'")) else line


def manpage(entries):
    out = [
        '.\\" SPDX-License-Identifier: Apache-2.0',
        '.\\" Made by `make docs` (harness/docs/variables.py) from the kiosk\'s own table of variables',
        '.\\" (kiosk-dev variables) and docs/man/variables.txt: edit those, not this file.',
        '.TH KIOSK.CONF 5 "" "kiosk" "File Formats"',
        ".SH NAME",
        "kiosk.conf \\- the kiosk service\\(aqs settings, /etc/default/kiosk",
        ".SH SYNOPSIS",
        ".B /etc/default/kiosk",
        ".SH DESCRIPTION",
        '.\\" Left-aligned: the long comma lists leave lines nothing could stretch evenly. groff',
        '.\\" 1.23\'s man macros set the adjustment again from the string AD at each paragraph.',
        ".ds AD l",
        ".ad l",
        '.\\" No hyphenation: the variables\' names and values must not be split.',
        ".nh",
        "The kiosk reads its settings once at start from environment variables named",
        ".BR KIOSK_* .",
        "Under systemd they come from",
        ".BR /etc/default/kiosk ,",
        "the unit\\(aqs",
        ".BR EnvironmentFile= :",
        "one",
        ".I NAME=value",
        "a line,",
        ".B #",
        "starts a comment.",
        "Every variable is optional; the file as installed lists each one commented out, at its default.",
        "An empty value means the default, except for a",
        ".B KIOSK_BEEP_*",
        "pattern, where it means silence.",
        ".PP",
        "A value that does not parse, is out of range or contradicts another stops the kiosk before it",
        "touches any device: exit status 78 and one",
        ".B config_error",
        "line per problem, naming the variable, the value given and what is accepted.",
        "An unknown",
        ".B KIOSK_*",
        "name gets a",
        ".B config_warning",
        "with the nearest known name.",
        ".B kiosk check",
        "reads the same variables from its environment and prints every setting\\(aqs effective value.",
        "After a change:",
        ".PP",
        ".RS",
        ".nf",
        "sudo sh \\-c \\(aqset \\-a; . /etc/default/kiosk; exec kiosk check\\(aq",
        "sudo systemctl restart kiosk",
        ".fi",
        ".RE",
        ".PP",
        "Each variable below shows its default and what it accepts, as the kiosk itself states them.",
    ]
    for group, name, default, accepted, meaning in entries:
        if group:
            out += [".SS " + roff_text(group)]
        out += [".TP", ".B " + name, roff_lines(meaning),
                ".br", "Default: \\fB" + roff_escape(default) + "\\fR.", ".br", "Accepts: " + roff_escape(accepted) + "."]
    out += [
        ".SH FILES",
        ".TP",
        ".B /etc/default/kiosk",
        "the settings (made by the package from /usr/share/kiosk/kiosk.env when there is none, never"
        " overwritten, removed on purge; deploy/install.sh never overwrites it; kiosk setup rewrites it)",
        ".TP",
        ".B /usr/share/kiosk/kiosk.env",
        "the file as shipped, every variable at its default",
        ".SH SEE ALSO",
        ".BR kiosk (8),",
        ".BR systemd.exec (5),",
        ".BR journalctl (1);",
        "the manual in",
        ".B /usr/share/doc/kiosk",
        "(docs/reference.md: every variable, event, exit status and command).",
    ]
    return "\n".join(out) + "\n"


# --- interface.md -------------------------------------------------------------------------------

def interface_names(path):
    names = set()
    for line in open(path, encoding="utf-8"):
        for n in re.findall(r"KIOSK_[A-Z0-9_]*[A-Z0-9]", line):
            names.add(n)
        # "`KIOSK_DOOR_LINE` (+ `_ACTIVE_LOW`)": the row's *_LINE names have an _ACTIVE_LOW too.
        if line.startswith("| ") and "(+ `_ACTIVE_LOW`)" in line:
            first = line.split("|")[1]
            for n in re.findall(r"KIOSK_[A-Z0-9_]*_LINE\b", first):
                names.add(n[: -len("_LINE")] + "_ACTIVE_LOW")
    return names - NOT_SETTINGS


def interface_path():
    shared = os.environ.get("KIOSK_SHARED") or os.path.join(REPO, "..", "shared")
    return os.path.normpath(os.path.join(shared, "docs", "interface.md"))


# --- main -----------------------------------------------------------------------------------------

def check(rows):
    problems, notes = [], []
    code = [name for name, _, _ in rows]
    code_set = set(code)
    meanings = read_meanings()
    meant = [name for _, name, _ in meanings]
    for n in sorted(code_set - set(meant)):
        problems.append(f"{n}: in the code, no meaning in docs/man/variables.txt (add a line, then make docs)")
    for n in sorted(set(meant) - code_set):
        problems.append(f"{n}: in docs/man/variables.txt, not in the code (Configuration.table)")
    for n in sorted({x for x in meant if meant.count(x) > 1}):
        problems.append(f"{n}: twice in docs/man/variables.txt")
    entries = joined(rows, meanings)

    ref_now = open(REFERENCE, encoding="utf-8").read()
    block = ref_now.split(BEGIN, 1)[1].split(END, 1)[0] if BEGIN in ref_now and END in ref_now else ""
    ref_names = set(re.findall(r"^\| `(KIOSK_[A-Z0-9_]+)`", block, re.M))
    for n in sorted(code_set - ref_names):
        problems.append(f"{n}: in the code, not in docs/reference.md's table (make docs)")
    for n in sorted(ref_names - code_set):
        problems.append(f"{n}: in docs/reference.md's table, not in the code (make docs)")
    if block and ref_now != reference_text(entries):
        problems.append("docs/reference.md's table is not what make docs makes from the code now (make docs)")

    man_now = open(MANPAGE, encoding="utf-8").read() if os.path.exists(MANPAGE) else ""
    man_names = set(re.findall(r"^\.B (KIOSK_[A-Z0-9_]+)$", man_now, re.M))
    for n in sorted(code_set - man_names):
        problems.append(f"{n}: in the code, not in kiosk.conf(5) (make docs)")
    for n in sorted(man_names - code_set):
        problems.append(f"{n}: in kiosk.conf(5), not in the code (make docs)")
    if man_now and man_now != manpage(entries):
        problems.append("docs/man/kiosk.conf.5 is not what make docs makes from the code now (make docs)")

    iface = interface_path()
    if os.path.exists(iface):
        contract = interface_names(iface)
        for n in sorted(code_set - contract):
            problems.append(f"{n}: in the code, not in {iface}")
        for n in sorted(contract - code_set - set(NOT_BUILT)):
            problems.append(f"{n}: in {iface}, not in the code (build it, or add it to NOT_BUILT in harness/docs/variables.py with its issue)")
        for n in sorted(set(NOT_BUILT) & code_set):
            problems.append(f"{n}: built now: remove it from NOT_BUILT in harness/docs/variables.py (issue {NOT_BUILT[n]})")
        for n in sorted(set(NOT_BUILT) - contract):
            problems.append(f"{n}: in NOT_BUILT, but not in {iface}")
        waiting = sorted(set(NOT_BUILT) & contract - code_set)
        notes.append(f"interface.md: {len(code_set & contract)} variables as in the code; not built yet: "
                     + ", ".join(f"{n} (#{NOT_BUILT[n]})" for n in waiting))
    else:
        notes.append(f"SKIP interface.md leg: no {iface} (set KIOSK_SHARED to the shared folder)")
    return problems, notes, len(code)


def main(argv):
    if len(argv) != 3 or argv[0] not in ("write", "check") or argv[1] != "--table":
        sys.exit(__doc__)
    rows = read_table(argv[2])
    if argv[0] == "write":
        meanings = read_meanings()
        missing = sorted(set(n for n, _, _ in rows) - set(n for _, n, _ in meanings))
        if missing:
            sys.exit("variables.py: no meaning in docs/man/variables.txt for " + ", ".join(missing))
        entries = joined(rows, meanings)
        text = reference_text(entries)
        open(REFERENCE, "w", encoding="utf-8").write(text)
        open(MANPAGE, "w", encoding="utf-8").write(manpage(entries))
        print(f"variables.py: {len(rows)} variables into docs/reference.md and docs/man/kiosk.conf.5")
        return 0
    problems, notes, count = check(rows)
    for n in notes:
        print(n)
    for p in problems:
        print("FAIL " + p)
    if problems:
        return 1
    legs = "docs/reference.md, kiosk.conf(5) and interface.md" if not any(n.startswith("SKIP") for n in notes) \
        else "docs/reference.md and kiosk.conf(5) (interface.md not checked)"
    print(f"variables.py: {count} variables: the code, docs/man/variables.txt, {legs} agree")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
