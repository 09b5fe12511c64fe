#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Tests of the verdict programs in deploy/examples, run for real: verdict-allowlist against an
# allowlist file, verdict-http against a stand-in service on loopback (verdict_server.py) that
# answers granted, denied, slowly or not at all; pretix-keys against a stand-in of pretix's API
# (pretix_server.py) serving a key pretix made. Each program gets what the kiosk gives it: the
# code on stdin, KIOSK_CODE and KIOSK_SYMBOLOGY in its environment.
#
#   harness/examples/run.sh
#
# Needs python3; issue-credential needs the peers' venv (`make peers`: .cache/peers, found through
# KIOSK_PEERS_PYTHON as the Makefile exports it), pretix-keys pretix's beside it (.cache/peers/pretix). Prints one PASS/FAIL line per check and ends with `N passed, M failed`;
# exits 1 when any check failed. KEEP=1 keeps the work folder.
set -uo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
examples=$repo/deploy/examples
passed=0 failed=0
pass() { echo "PASS $1"; passed=$((passed + 1)); }
fail() { echo "FAIL $1${2:+: $2}"; failed=$((failed + 1)); }

work=$(mktemp -d /tmp/kiosk-examples-test.XXXXXX)
server_pid= pretix_pid=
cleanup() {
  [ -z "$server_pid" ] || kill "$server_pid" 2>/dev/null
  [ -z "$pretix_pid" ] || kill "$pretix_pid" 2>/dev/null
  if [ "${KEEP:-0}" = 1 ]; then echo "work folder: $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT

# verdict NAME EXPECTED_STATUS PROGRAM CODE_FILE [VAR=VALUE...]: runs PROGRAM as the kiosk does
# (the code's bytes on stdin and in KIOSK_CODE when they hold no NUL byte), in an environment of
# only what is given, and checks its exit status.
verdict() {
  local name=$1 expected=$2 program=$3 code_file=$4 out status; shift 4
  local env=(PATH=/usr/bin:/bin KIOSK_SYMBOLOGY=QR-Code "$@")
  if ! LC_ALL=C grep -q $'\x00' "$code_file" 2>/dev/null && [ "$(head -c 65536 "$code_file" | wc -c)" = "$(wc -c <"$code_file")" ]; then
    env+=("KIOSK_CODE=$(cat "$code_file"; echo x)")
    env[-1]=${env[-1]%x}
  fi
  out=$(env -i "${env[@]}" "$program" <"$code_file" 2>&1)
  status=$?
  if [ "$status" = "$expected" ]; then pass "$name (exit $status: $out)"; else fail "$name" "exit $status, expected $expected; said: $out"; fi
}
code() { printf '%b' "$2" >"$work/$1"; echo "$work/$1"; }

echo "== verdict-allowlist"
allow=$work/allowlist
printf 'ABC-123\n0012345\nwith space\n\nwindows-line\r\nlast-line-no-newline' >"$allow"
A=$examples/verdict-allowlist
verdict "a listed code is granted" 0 "$A" "$(code c1 'ABC-123')" VERDICT_ALLOWLIST="$allow"
verdict "a code with a blank inside is one line" 0 "$A" "$(code c2 'with space')" VERDICT_ALLOWLIST="$allow"
verdict "a CRLF line's end is not part of it" 0 "$A" "$(code c3 'windows-line')" VERDICT_ALLOWLIST="$allow"
verdict "the last line without a newline" 0 "$A" "$(code c4 'last-line-no-newline')" VERDICT_ALLOWLIST="$allow"
verdict "an unlisted code is denied" 1 "$A" "$(code c5 'XYZ-999')" VERDICT_ALLOWLIST="$allow"
verdict "a prefix of a listed code is denied" 1 "$A" "$(code c6 'ABC-12')" VERDICT_ALLOWLIST="$allow"
verdict "a listed code with more after it is denied" 1 "$A" "$(code c7 'ABC-1234')" VERDICT_ALLOWLIST="$allow"
verdict "case matters" 1 "$A" "$(code c8 'abc-123')" VERDICT_ALLOWLIST="$allow"
verdict "a listed code with a newline added is denied" 1 "$A" "$(code c9 'ABC-123\n')" VERDICT_ALLOWLIST="$allow"
verdict "blanks are not trimmed" 1 "$A" "$(code c10 ' ABC-123')" VERDICT_ALLOWLIST="$allow"
verdict "an empty code is denied, though the file has an empty line" 1 "$A" "$(code c11 '')" VERDICT_ALLOWLIST="$allow"
verdict "two listed lines in one code are denied" 1 "$A" "$(code c12 'ABC-123\n0012345')" VERDICT_ALLOWLIST="$allow"
verdict "a NUL byte (stdin only, no KIOSK_CODE) is denied" 1 "$A" "$(code c13 'ABC-123\x00')" VERDICT_ALLOWLIST="$allow"
printf 'caf\xc3\xa9\n\xff\xfe\n' >"$work/bytes-allowlist"
verdict "non-UTF-8 bytes compared as bytes" 0 "$A" "$(code c14 '\xff\xfe')" VERDICT_ALLOWLIST="$work/bytes-allowlist"
verdict "UTF-8 compared as bytes" 0 "$A" "$(code c15 'caf\xc3\xa9')" VERDICT_ALLOWLIST="$work/bytes-allowlist"
verdict "a missing allowlist is an error, not a refusal" 2 "$A" "$(code c16 'ABC-123')" VERDICT_ALLOWLIST="$work/missing"
mkdir "$work/a-folder"
verdict "an allowlist that is a folder is an error" 2 "$A" "$(code c17 'ABC-123')" VERDICT_ALLOWLIST="$work/a-folder"
# A code that would do something in a shell is only data.
printf '%s\n' '$(touch '"$work"'/pwned)' '`touch '"$work"'/pwned`; x' >"$work/shell-allowlist"
verdict "shell syntax in a code is only compared" 1 "$A" "$(code c18 '$(touch '"$work"'/pwned2)')" VERDICT_ALLOWLIST="$work/shell-allowlist"
verdict "shell syntax in a listed code matches as text" 0 "$A" "$(code c19 '$(touch '"$work"'/pwned)')" VERDICT_ALLOWLIST="$work/shell-allowlist"
verdict "backticks in a listed code match as text" 0 "$A" "$(code c20 '`touch '"$work"'/pwned`; x')" VERDICT_ALLOWLIST="$work/shell-allowlist"
if [ -e "$work/pwned" ] || [ -e "$work/pwned2" ]; then fail "nothing ran the code"; else pass "nothing ran the code"; fi

echo "== verdict-http"
H=$examples/verdict-http
record=$work/record.json
exec {server_out}< <(RECORD=$record exec python3 "$repo/harness/examples/verdict_server.py")
server_pid=$!
read -r -t 10 port <&"$server_out" || { fail "the stand-in service started"; echo "$passed passed, $failed failed"; exit 1; }
url=http://127.0.0.1:$port
verdict "a code the service grants" 0 "$H" "$(code h1 'OK-1')" VERDICT_URL="$url/check"
verdict "a code the service denies" 1 "$H" "$(code h2 'NOT-OK')" VERDICT_URL="$url/check"
verdict "a JSON grant" 0 "$H" "$(code h3 'x')" VERDICT_URL="$url/json"
verdict "a JSON refusal" 1 "$H" "$(code h4 'x')" VERDICT_URL="$url/json-denied"
verdict "403 is a refusal" 1 "$H" "$(code h5 'x')" VERDICT_URL="$url/forbid"
verdict "500 is an error even saying granted" 2 "$H" "$(code h6 'x')" VERDICT_URL="$url/broken"
verdict "an answer that is neither is an error" 2 "$H" "$(code h7 'x')" VERDICT_URL="$url/maybe"
verdict "404 is an error" 2 "$H" "$(code h8 'x')" VERDICT_URL="$url/nowhere"
# Bounds short of what waiting would take (the service answers after 5 s; the trickle takes 2.8 s),
# with room for a loaded machine: they tell a cut from a wait, not how fast the cut is.
start=$(date +%s%N)
verdict "no answer within VERDICT_TIMEOUT_MS is an error" 2 "$H" "$(code h9 'OK-1')" VERDICT_URL="$url/slow" VERDICT_TIMEOUT_MS=500
ms=$(( ($(date +%s%N) - start) / 1000000 ))
if [ "$ms" -lt 4000 ]; then pass "the slow service was given up on after ${ms} ms (limit 500)"; else fail "timeout" "took ${ms} ms"; fi
start=$(date +%s%N)
verdict "an answer trickled past the limit is an error" 2 "$H" "$(code h10 'OK-1')" VERDICT_URL="$url/trickle" VERDICT_TIMEOUT_MS=1000
ms=$(( ($(date +%s%N) - start) / 1000000 ))
if [ "$ms" -lt 2600 ]; then pass "the trickle was cut at the whole exchange's limit (${ms} ms)"; else fail "whole-exchange timeout" "took ${ms} ms"; fi
verdict "the trickle within a long limit is a grant" 0 "$H" "$(code h11 'x')" VERDICT_URL="$url/trickle" VERDICT_TIMEOUT_MS=5000
verdict "no service listening is an error" 2 "$H" "$(code h12 'OK-1')" VERDICT_URL="http://127.0.0.1:1/check"
verdict "no VERDICT_URL is an error" 2 "$H" "$(code h13 'OK-1')"
verdict "a bad VERDICT_TIMEOUT_MS is an error" 2 "$H" "$(code h14 'OK-1')" VERDICT_URL="$url/check" VERDICT_TIMEOUT_MS=soon
echo 'secret-token' >"$work/token"
verdict "awkward bytes reach the service" 1 "$H" "$(code h15 'a&b=c d+e%\xff\x00')" VERDICT_URL="$url/check" VERDICT_TOKEN_FILE="$work/token"
got=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["code"], r["symbology"], r["authorization"], r["type"])' "$record")
want="$(printf 'a&b=c d+e%%\xff\x00' | od -An -tx1 | tr -d ' \n') QR-Code Bearer secret-token application/x-www-form-urlencoded"
if [ "$got" = "$want" ]; then pass "the exact code bytes, the symbology and the token arrived"; else fail "request" "got '$got', want '$want'"; fi
verdict "a missing token file is an error" 2 "$H" "$(code h16 'OK-1')" VERDICT_URL="$url/check" VERDICT_TOKEN_FILE="$work/no-token"

echo "== issue-credential"
# The example issuer's credentials, checked by an independent verifier (pycose) against the public
# key it wrote for the trust directory; its TOTP line by pyotp.
py=${KIOSK_PEERS_PYTHON:-$repo/.cache/peers/bin/python}
I=$examples/issue-credential
if [ ! -x "$py" ]; then
  fail "issue-credential" "no $py: run make peers (it makes the peers' venv)"
else
  t=$work/issuer
  mkdir -p "$t"
  if out=$("$py" "$I" keygen --kid lobby-2026 --key "$t/issuer.key" --trust-dir "$t/trust" 2>&1) && [ -f "$t/trust/lobby-2026.pem" ] \
     && [ "$(stat -c %a "$t/issuer.key")" = 600 ]; then pass "keygen writes lobby-2026.pem and a 0600 private key"; else fail "keygen" "$out"; fi
  if "$py" "$I" keygen --kid lobby-2026 --key "$t/issuer.key" --trust-dir "$t/trust" >/dev/null 2>&1; then fail "keygen overwrote a key"; else pass "keygen never overwrites a key"; fi
  "$py" "$I" keygen --kid ed-1 --alg EdDSA --key "$t/ed.key" --trust-dir "$t/trust" >/dev/null 2>&1
  verify_credential() {  # KIDFILE CREDENTIAL WANT(python expression over claims): prints ok or why not
    "$py" - "$@" <<'PY' 2>&1
import sys, zlib, cbor2
from pycose.messages import Sign1Message
from pycose.keys import CoseKey
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
pem, text, want = sys.argv[1], sys.argv[2], sys.argv[3]
A = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ $%*+-./:"
assert text.startswith("KC1:"), text
s = text[4:]
out = bytearray()
for i in range(0, len(s) - 2, 3):
    n = A.index(s[i]) + A.index(s[i + 1]) * 45 + A.index(s[i + 2]) * 2025
    out += bytes([n >> 8, n & 255])
if len(s) % 3 == 2:
    out.append(A.index(s[-2]) + A.index(s[-1]) * 45)
msg = Sign1Message.decode(zlib.decompress(bytes(out)))
pub = serialization.load_pem_public_key(open(pem, "rb").read())
if isinstance(pub, ec.EllipticCurvePublicKey):
    n = pub.public_numbers()
    msg.key = CoseKey.from_dict({1: 2, -1: 1, -2: n.x.to_bytes(32, "big"), -3: n.y.to_bytes(32, "big")})
else:
    msg.key = CoseKey.from_dict({1: 1, -1: 6, -2: pub.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)})
assert msg.verify_signature(), "signature"
claims = cbor2.loads(msg.payload)
assert eval(want, {"c": claims}), claims
print("ok")
PY
  }
  check_credential() {  # NAME KIDFILE CREDENTIAL WANT
    local name=$1 got; shift
    got=$(verify_credential "$@")
    if [ "$got" = ok ]; then pass "$name"; else fail "$name" "$got"; fi
  }
  visitor=$("$py" "$I" mint --key "$t/issuer.key" --kid lobby-2026 --iss acme --sub visitor-4711 --aud door-1 --valid-for 8h 2>/dev/null)
  check_credential "a visitor pass verifies (pycose) with sub, aud and 8 h" "$t/trust/lobby-2026.pem" "$visitor" \
    'c[2] == "visitor-4711" and c[3] == "door-1" and c[1] == "acme" and c[4] - c[5] == 8 * 3600 and 7 not in c'
  ticket=$("$py" "$I" mint --key "$t/ed.key" --kid ed-1 --iss acme --sub ticket-0042 --one-time --valid-for 1d 2>"$t/cti")
  check_credential "a one-time EdDSA ticket verifies with a cti" "$t/trust/ed-1.pem" "$ticket" 'len(c[7]) == 8 and c[2] == "ticket-0042"'
  cleaner=$("$py" "$I" mint --key "$t/issuer.key" --kid lobby-2026 --iss acme --sub cleaner-7 --group cleaning --group night --uses 20 2>/dev/null)
  check_credential "mint --group --uses: the text claims beside the numbered ones, and a cti" "$t/trust/lobby-2026.pem" "$cleaner" \
    'c["groups"] == ["cleaning", "night"] and c["uses"] == 20 and len(c[7]) == 8 and c[2] == "cleaner-7" and c[1] == "acme" and 4 in c'
  if grep -q "^cti [0-9a-f]\{16\} " "$t/cti"; then pass "mint --one-time says the cti to revoke it by"; else fail "cti" "$(cat "$t/cti")"; fi
  if [ "$(verify_credential "$t/trust/ed-1.pem" "$visitor" True)" != ok ]; then pass "the checker refuses a pass under another key"; else fail "the checker accepted a pass under another key"; fi
  line=$("$py" "$I" totp --holder alice 2>/dev/null)
  secret=$(echo "$line" | cut -d' ' -f2)
  if [[ "$line" =~ ^alice\ [A-Z2-7]{32}\ 6\ 30$ ]]; then pass "totp prints a secrets line ($(echo "$line" | cut -c1-6)...)"; else fail "totp" "$line"; fi
  kt=$("$py" "$I" code --holder alice --secret "$secret")
  want=$("$py" -c 'import pyotp, sys; print(pyotp.TOTP(sys.argv[1]).at(int(sys.argv[2])))' "$secret" "$(echo "$kt" | cut -d: -f3)")
  if [ "$(echo "$kt" | cut -d: -f1,2)" = "KT1:alice" ] && [ "$(echo "$kt" | cut -d: -f4)" = "$want" ]; then pass "code prints KT1:alice:TIME:DIGITS as pyotp computes it"; else fail "code" "$kt (want $want)"; fi
fi

echo "== pretix-keys"
# An event's key (made by pretix itself: its Sig1TicketSecretGenerator, .cache/peers/pretix) and
# revoked secrets served by a stand-in of pretix's API with its JSON shapes (pretix_server.py).
P=$examples/pretix-keys
pretix_py=$(dirname "$(dirname "$py")")/pretix/bin/python
if [ ! -x "$pretix_py" ]; then
  fail "pretix-keys" "no $pretix_py: run make peers (it installs pretix there)"
else
  p=$work/pretix
  mkdir -p "$p"
  printf '%s\n' '{"op":"event","name":"conf"}' '{"op":"mint","event":"conf","item":1}' '{"op":"mint","event":"conf","item":2}' \
    '{"op":"mint","event":"conf","item":3}' | "$pretix_py" "$repo/Tests/Peers/pretix_tickets.py" >"$p/minted"
  key=$(sed -n 1p "$p/minted" | python3 -c 'import json,sys; print(json.load(sys.stdin)["valid_key"])')
  secrets=$(sed -n '2,4p' "$p/minted" | python3 -c 'import json,sys; print(json.dumps([json.loads(l)["secret"] for l in sys.stdin]))')
  echo 'tok-3f9a' >"$p/token"
  chmod 600 "$p/token"
  exec {pretix_out}< <(VALID_KEY=$key SECRETS=$secrets TOKEN=tok-3f9a RECORD=$p/record exec python3 "$repo/harness/examples/pretix_server.py")
  pretix_pid=$!
  read -r -t 10 pport <&"$pretix_out" || fail "the stand-in pretix started"
  printf '%s\n' 'mallory' '# pretix acme/conf: begin' 'an-old-secret' '# pretix acme/conf: end' 'bob' >"$p/revoked"
  run_keys() { "$P" --url "http://127.0.0.1:$pport" --organizer acme --trust-dir "$p/trust" --revoked-file "$p/revoked" "$@" 2>&1; }
  if out=$(run_keys --event conf --token-file "$p/token"); then pass "pretix-keys fetches and writes ($out)"; else fail "pretix-keys" "$out"; fi
  want=$(python3 -c 'import base64,sys; sys.stdout.write(base64.b64decode(sys.argv[1]).decode())' "$key")
  if [ "$(cat "$p/trust/pretix/conf.pem")" = "$want" ] && [ "$(stat -c %a "$p/trust/pretix/conf.pem")" = 644 ]; then
    pass "the event's key is the PEM pretix's valid_keys give (0644)"; else fail "key" "$(cat "$p/trust/pretix/conf.pem")"; fi
  block=$(sed -n '/^# pretix acme\/conf: begin$/,/^# pretix acme\/conf: end$/p' "$p/revoked" | sed '1d;$d')
  if [ "$block" = "$(python3 -c 'import json,sys; print("\n".join(json.loads(sys.argv[1])))' "$secrets")" ]; then
    pass "the revoked secrets of both pages, in the event's block"; else fail "revoked" "$(cat "$p/revoked")"; fi
  if grep -qx mallory "$p/revoked" && grep -qx bob "$p/revoked" && ! grep -q an-old-secret "$p/revoked"; then
    pass "the file's other lines are kept, the block's old ones replaced"; else fail "revoked file" "$(cat "$p/revoked")"; fi
  if python3 -c 'import json,sys; r=[json.loads(l) for l in open(sys.argv[1])]; assert len(r) == 3 and all(x["authorization"] == "Token tok-3f9a" for x in r), r' "$p/record"; then
    pass "three requests (the event, two pages), each with the token from the file"; else fail "requests" "$(cat "$p/record")"; fi
  touch "$p/trust/pretix/conf.2.pem" "$p/trust/pretix/other.pem"
  before=$(cat "$p/revoked"; ls "$p/trust/pretix")
  echo 'wrong-token' >"$p/bad-token"
  if out=$(run_keys --event conf --token-file "$p/bad-token"); then fail "a refused token" "exit 0: $out"; 
  elif [ "$(cat "$p/revoked"; ls "$p/trust/pretix")" = "$before" ]; then pass "a token pretix refuses changes nothing ($out)"; else fail "a refused token changed files"; fi
  if out=$(run_keys --event random --token-file "$p/token"); then fail "an event without signed tickets" "exit 0"; 
  elif [[ "$out" == *"pretix signature scheme 1"* ]]; then pass "an event without signed tickets is said plainly"; else fail "no key" "$out"; fi
  if out=$(run_keys --event conf --token-file "$p/token"); then :; fi
  if [ ! -e "$p/trust/pretix/conf.2.pem" ] && [ -e "$p/trust/pretix/other.pem" ]; then
    pass "a key pretix no longer lists is removed, another event's kept"; else fail "stale keys" "$(ls "$p/trust/pretix")"; fi
  if out=$("$P" --url http://pretix.example --organizer acme --event conf --token-file "$p/token" --trust-dir "$p/trust" --revoked-file "$p/revoked" 2>&1); then
    fail "plain http" "exit 0"; elif [[ "$out" == *"https:// only"* ]]; then pass "plain http to another machine is refused"; else fail "http" "$out"; fi
  if "$P" --url "http://127.0.0.1:$pport" --organizer acme --event conf --token tok-3f9a >/dev/null 2>&1; then fail "a token on the command line was taken"; else pass "a token on the command line is not taken"; fi
  if out=$(run_keys --event conf --token-file "$p/missing"); then fail "no token file" "exit 0"; else pass "no token file: $out"; fi
  kill "$pretix_pid" 2>/dev/null
fi

echo "== site-bundle"
# The site's tool (issue 35): a key pair, a folder signed as a bundle, verified by its own reader
# with the public key (pycose); names a kiosk would refuse are refused before signing.
S=$examples/site-bundle
if [ ! -x "$py" ]; then
  fail "site-bundle" "no $py: run make peers (it makes the peers' venv)"
else
  s=$work/site
  mkdir -p "$s/folder/trust/pretix"
  if out=$("$py" "$S" keygen --key "$s/site.key" --public "$s/site.pem" 2>&1) && [ "$(stat -c %a "$s/site.key")" = 600 ]; then
    pass "keygen writes site.pem and a 0600 private key"; else fail "site keygen" "$out"; fi
  if "$py" "$S" keygen --key "$s/site.key" --public "$s/other.pem" >/dev/null 2>&1; then fail "site keygen overwrote a key"; else pass "site keygen never overwrites a key"; fi
  printf 'mallory\n' >"$s/folder/revoked"
  cp "$s/site.pem" "$s/folder/trust/issuer-1.pem"
  if out=$("$py" "$S" sign --key "$s/site.key" --folder "$s/folder" --version 8 --out "$s/b.cose" 2>&1) \
     && got=$("$py" "$S" show --file "$s/b.cose" --public "$s/site.pem" 2>&1) && [[ "$got" == "version 8, issued "*", verified"*"revoked: 8 bytes"*"trust/issuer-1.pem: "* ]]; then
    pass "sign makes a bundle that verifies with the site's public key: version 8, its two files"; else fail "sign" "$out $got"; fi
  "$py" "$S" keygen --key "$s/rogue.key" --public "$s/rogue.pem" >/dev/null 2>&1
  if "$py" "$S" show --file "$s/b.cose" --public "$s/rogue.pem" >/dev/null 2>&1; then fail "a bundle verified with another key"; else pass "show refuses a bundle under another key"; fi
  # The PINs' hashes travel as `pins` (issue 54): pin set writes them 0600 in the site folder, the
  # bundle carries the file's bytes whole, and Python's hashlib.scrypt finds the PIN in the hash
  # the verified bundle carries; a pins file others may read is refused before signing.
  if printf '4711\n' | "$py" "$examples/issue-credential" pin set --subject alice --file "$s/folder/pins" >/dev/null 2>&1 \
     && out=$("$py" "$S" sign --key "$s/site.key" --folder "$s/folder" --version 10 --out "$s/p.cose" 2>&1) \
     && got=$("$py" "$S" show --file "$s/p.cose" --public "$s/site.pem" 2>&1) && [[ "$got" == *"verified"*"pins: "*" bytes"* ]] \
     && "$py" - "$s/p.cose" "$s/folder/pins" <<'PY' 2>&1; then
import base64, hashlib, sys, cbor2
from pycose.messages import Sign1Message
files = cbor2.loads(Sign1Message.decode(open(sys.argv[1], "rb").read()).payload)["files"]
assert files["pins"] == open(sys.argv[2], "rb").read(), "the bundle's pins are the file's bytes"
subject, h = files["pins"].decode().split()
_, logn, r, p, salt, key = h.split("$")
b = lambda t: base64.urlsafe_b64decode(t + "=" * (-len(t) % 4))
k = hashlib.scrypt(b"4711", salt=b(salt), n=1 << int(logn), r=int(r), p=int(p), dklen=len(b(key)), maxmem=1 << 28)
assert subject == "alice" and k == b(key), "hashlib.scrypt finds the PIN"
assert "4711" not in files["pins"].decode(), "no PIN in the bundle"
PY
    pass "a bundle carries pins: pin set's file whole, its hash found by hashlib.scrypt"; else fail "pins in a bundle" "$out $got"; fi
  chmod 644 "$s/folder/pins"
  if out=$("$py" "$S" sign --key "$s/site.key" --folder "$s/folder" --version 11 --out "$s/q.cose" 2>&1); then fail "a pins file others may read was signed"
  elif [[ "$out" == *"others may read it (mode 644): chmod 600"* ]] && [ ! -e "$s/q.cose" ]; then pass "a pins file others may read is refused before signing"; else fail "pins mode" "$out"; fi
  rm "$s/folder/pins"
  touch "$s/folder/trust/.hidden.pem"
  if out=$("$py" "$S" sign --key "$s/site.key" --folder "$s/folder" --version 9 --out "$s/c.cose" 2>&1); then fail "a hidden key file was signed"
  elif [[ "$out" == *"not a name a bundle carries"* ]] && [ ! -e "$s/c.cose" ]; then pass "a name a kiosk would refuse is refused before signing"; else fail "bad name" "$out"; fi
fi

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
