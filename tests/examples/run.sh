#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Tests of the verdict programs in deploy/examples, run for real: verdict-allowlist against an
# allowlist file, verdict-http against a stand-in service on loopback (verdict_server.py) that
# answers granted, denied, slowly or not at all. Each program gets what the kiosk gives it: the
# code on stdin, KIOSK_CODE and KIOSK_SYMBOLOGY in its environment.
#
#   tests/examples/run.sh
#
# Needs python3 only. Prints one PASS/FAIL line per check and ends with `N passed, M failed`;
# exits 1 when any check failed. KEEP=1 keeps the work folder.
set -uo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
examples=$repo/deploy/examples
passed=0 failed=0
pass() { echo "PASS $1"; passed=$((passed + 1)); }
fail() { echo "FAIL $1${2:+: $2}"; failed=$((failed + 1)); }

work=$(mktemp -d /tmp/kiosk-examples-test.XXXXXX)
server_pid=
cleanup() {
  [ -z "$server_pid" ] || kill "$server_pid" 2>/dev/null
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
exec {server_out}< <(RECORD=$record exec python3 "$repo/tests/examples/verdict_server.py")
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
start=$(date +%s%N)
verdict "no answer within VERDICT_TIMEOUT_MS is an error" 2 "$H" "$(code h9 'OK-1')" VERDICT_URL="$url/slow" VERDICT_TIMEOUT_MS=500
ms=$(( ($(date +%s%N) - start) / 1000000 ))
if [ "$ms" -lt 1500 ]; then pass "the slow service was given up on after ${ms} ms (limit 500)"; else fail "timeout" "took ${ms} ms"; fi
start=$(date +%s%N)
verdict "an answer trickled past the limit is an error" 2 "$H" "$(code h10 'OK-1')" VERDICT_URL="$url/trickle" VERDICT_TIMEOUT_MS=1000
ms=$(( ($(date +%s%N) - start) / 1000000 ))
if [ "$ms" -lt 2000 ]; then pass "the trickle was cut at the whole exchange's limit (${ms} ms)"; else fail "whole-exchange timeout" "took ${ms} ms"; fi
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

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
