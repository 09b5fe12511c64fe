#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""What a recording says, heard by an independent recogniser: CMU pocketsphinx (Debian's
python3-pocketsphinx with its US English model, pocketsphinx-en-us), constrained to a JSGF grammar
of the phrases the kiosk may say, one or more of them in a row.

    speech_recognizer.py RAW PHRASE...

RAW: mono signed 16-bit little-endian samples at 16 kHz (the model's rate). Prints one JSON
object: {"hypothesis": "...", "phrases": [i, ...]}, the indices of PHRASE in the order heard
(-1 where the words match no phrase). Run with Debian's /usr/bin/python3 (the package's module
lives in its dist-packages, not in the peers' virtual environment). Where Debian has no Python
module (trixie), its program, pocketsphinx_continuous, hears the recording (as a WAV file) with the
same model, grammar and beams, one line an utterance.
"""
import json
import os
import re
import sys
import tempfile

import subprocess
import wave

try:
    from pocketsphinx import pocketsphinx as ps
except ImportError:
    ps = None

MODEL = "/usr/share/pocketsphinx/model/en-us"


def words(text):
    return re.sub(r"[^a-z' ]", " ", text.lower()).split()

# Wider beams than the defaults: with them the grammar's last phrase is not lost (measured on
# espeak-ng's voices: the default beams end some recordings early).
BEAMS = [("-beam", "1e-80"), ("-wbeam", "1e-60"), ("-pbeam", "1e-80")]


def by_module(raw_path, jsgf):
    """The whole recording as one utterance, through python3-pocketsphinx (bookworm)."""
    config = ps.Decoder.default_config()
    config.set_string("-hmm", os.path.join(MODEL, "en-us"))
    config.set_string("-dict", os.path.join(MODEL, "cmudict-en-us.dict"))
    config.set_string("-jsgf", jsgf)
    config.set_string("-logfn", "/dev/null")
    for name, value in BEAMS:
        config.set_float(name, float(value))
    decoder = ps.Decoder(config)
    decoder.start_utt()
    with open(raw_path, "rb") as f:
        decoder.process_raw(f.read(), False, True)
    decoder.end_utt()
    hyp = decoder.hyp()
    return hyp.hypstr.lower() if hyp else ""


def by_program(raw_path, jsgf):
    """pocketsphinx_continuous on the recording as a WAV file (trixie): an utterance a line."""
    with tempfile.NamedTemporaryFile(suffix=".wav", delete=False) as w:
        wav_path = w.name
    try:
        with open(raw_path, "rb") as f, wave.open(wav_path, "wb") as out:
            out.setnchannels(1)
            out.setsampwidth(2)
            out.setframerate(16000)
            out.writeframes(f.read())
        args = ["pocketsphinx_continuous", "-infile", wav_path, "-hmm", os.path.join(MODEL, "en-us"),
                "-dict", os.path.join(MODEL, "cmudict-en-us.dict"), "-jsgf", jsgf, "-logfn", "/dev/null"]
        for name, value in BEAMS:
            args += [name, value]
        result = subprocess.run(args, check=True, capture_output=True, text=True)
        return " ".join(line.strip().lower() for line in result.stdout.splitlines() if line.strip())
    finally:
        os.unlink(wav_path)


def main():
    raw_path, phrases = sys.argv[1], sys.argv[2:]
    spoken = [" ".join(words(p)) for p in phrases]
    distinct = sorted(set(spoken))
    grammar = "#JSGF V1.0;\ngrammar kiosk;\npublic <said> = ( " + " | ".join(distinct) + " )+ ;\n"
    with tempfile.NamedTemporaryFile("w", suffix=".jsgf", delete=False) as g:
        g.write(grammar)
    try:
        heard = by_module(raw_path, g.name) if ps else by_program(raw_path, g.name)
    finally:
        os.unlink(g.name)
    # The phrases in the order heard: at each point the longest phrase that starts there.
    out, rest = [], heard.split()
    by_length = sorted(distinct, key=lambda p: -len(p.split()))
    while rest:
        for p in by_length:
            n = len(p.split())
            if rest[:n] == p.split():
                out.append(spoken.index(p))
                rest = rest[n:]
                break
        else:
            out.append(-1)
            rest = rest[1:]
    print(json.dumps({"hypothesis": heard, "phrases": out}))


if __name__ == "__main__":
    main()
